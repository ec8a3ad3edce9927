import { createEventRouter, MemoryStore, type IdempotencyStore, type ReceiverOptions } from '../lib';
import { binaryMode, countingRouter, delivery, issued, ROWS, TOKEN } from './support/contract-rows';
import { DOORS, fetchDoor, type OpenDoor } from './support/doors';
import { gate } from './support/gate';
import { NEST_DOORS } from './support/nest-doors';

const failingStore = (claim: IdempotencyStore['claim']): IdempotencyStore => ({
  claim,
  markDone: async () => undefined,
  release: async () => undefined,
  get: async () => null,
});

describe.each([...DOORS, ...NEST_DOORS])('the receiver contract through $name', (door) => {
  let open: OpenDoor | undefined;
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });
  async function start(options: Partial<ReceiverOptions> = {}) {
    const { router, runs } = countingRouter();
    open = await door.open({ bearerTokens: [TOKEN], router, logger: false, ...options });
    return { door: open, runs };
  }

  it.each(ROWS)('$name → $status', async (row) => {
    const { door: d, runs } = await start(row.options);
    const answer = await d.send(row.request);
    expect(answer.status).toBe(row.status);
    // Over HTTP every answer states its length: a chunked one costs node a writev of four pieces.
    if (door !== fetchDoor) {
      expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(answer.text)));
      expect(answer.headers['transfer-encoding']).toBeUndefined();
    }
    for (const [name, value] of Object.entries(row.headers ?? {}))
      expect(answer.headers[name]).toMatch(value);
    if (row.status === 200) {
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.text)).toMatchObject({ status: row.outcome });
      expect([...runs.values()]).toEqual([1]);
    } else {
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      const problem = JSON.parse(answer.text) as Record<string, unknown>;
      expect(problem).toMatchObject({ status: row.status, type: `urn:service-webhooks:problem:${row.slug}` });
      expect(answer.text).not.toMatch(/hunter2|\/srv\/|at .*\.js/);
    }
    await d.drain({ timeoutMs: 2000 });
  });

  // The Express challengeHandshake({ requireToken }) has its own tests; this is the receiver's door.
  it('with requireTokenOnHandshake, answers a handshake without the token 401 and echoes nothing', async () => {
    const { door: d } = await start({ requireTokenOnHandshake: true });
    const challenge = { 'content-type': 'application/json', 'x-service-webhook-challenge': 'chl_r' };
    const without = await d.send({ headers: challenge, body: '{"challenge":"chl_r"}' });
    expect(without.status).toBe(401);
    expect(without.headers['www-authenticate']).toMatch(/^Bearer realm="service-webhooks"/);
    expect(without.text).not.toContain('chl_r');
    expect(without.headers['x-service-webhook-challenge']).toBeUndefined();
    const withToken = await d.send({
      headers: { ...challenge, authorization: `Bearer ${TOKEN}` },
      body: '{"challenge":"chl_r"}',
    });
    expect([withToken.status, withToken.text]).toEqual([200, '{"challenge":"chl_r"}']);
  });

  it('answers 500 when one handler fails beside one that succeeds, and runs only the failed one on the retry', async () => {
    const ran: string[] = [];
    let failures = 0;
    const router = createEventRouter()
      .on('ag.access_pass.issued', () => void ran.push('ok'), { name: 'ok' })
      .on('ag.access_pass.issued', function fails() {
        ran.push('fails');
        if (++failures === 1) throw new Error('the pass store said no');
      });
    const { door: d } = await start({ router });
    const event = issued({}, 'evt_half');
    const failed = await d.send(delivery(event));
    expect(failed.status).toBe(500);
    expect(failed.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((await d.send(delivery(event))).status).toBe(200);
    // The retry runs the handler that failed; the one that succeeded ran once.
    expect(ran.sort()).toEqual(['fails', 'fails', 'ok']);
    expect(JSON.parse((await d.send(delivery(event))).text)).toMatchObject({ status: 'duplicate' });
    expect(ran.sort()).toEqual(['fails', 'fails', 'ok']);
  });

  it('scopes idempotency keys by name: two receivers sharing a store do not share events', async () => {
    const store = new MemoryStore({ logger: false });
    const ran: string[] = [];
    const routed = (name: string) =>
      createEventRouter().on('ag.access_pass.issued', () => void ran.push(name));
    const { door: a } = await start({ idempotency: { store, scope: 'a' }, router: routed('a') });
    const b = await door.open({
      bearerTokens: [TOKEN],
      logger: false,
      idempotency: { store, scope: 'b' },
      router: routed('b'),
    });
    try {
      const event = issued({}, 'evt_scoped');
      expect(JSON.parse((await a.send(delivery(event))).text)).toMatchObject({ status: 'processed' });
      expect(JSON.parse((await b.send(delivery(event))).text)).toMatchObject({ status: 'processed' });
      expect(JSON.parse((await b.send(delivery(event))).text)).toMatchObject({ status: 'duplicate' });
      expect(ran).toEqual(['a', 'b']);
    } finally {
      await b.close();
      store.close();
    }
  });

  it('answers the handshake from its body, and from its header alone', async () => {
    const { door: d } = await start();
    const fromBody = await d.send({
      headers: { 'content-type': 'application/json', 'x-service-webhook-challenge': 'chl_h' },
      body: '{"challenge":"chl_b"}',
    });
    expect([fromBody.status, fromBody.text, fromBody.headers['x-service-webhook-challenge']]).toEqual([
      200,
      '{"challenge":"chl_b"}',
      'chl_b',
    ]);
    const fromHeader = await d.send({ headers: { 'x-service-webhook-challenge': 'chl_h' } });
    expect([fromHeader.status, fromHeader.text]).toEqual([200, '{"challenge":"chl_h"}']);
    const wrongToken = await d.send({
      headers: { 'x-service-webhook-challenge': 'chl_h', authorization: 'Bearer nope' },
    });
    expect(wrongToken.status).toBe(401);
    const badChallenge = await d.send({ headers: { 'x-service-webhook-challenge': 'two words' } });
    expect(badChallenge.status).toBe(400);
    expect(badChallenge.text).not.toContain('two words');
  });

  it.each([
    ['a binary-mode event', binaryMode],
    [
      'one ce-* header beside a handshake body',
      { headers: { 'ce-id': 'evt_1', 'content-type': 'application/json' }, body: '{"challenge":"chl_b"}' },
    ],
    ['a structured event', delivery(issued())],
  ])(
    'refuses %s sent with the challenge header (400), runs no handler and echoes nothing',
    async (_name, request) => {
      const { door: d, runs } = await start();
      const answer = await d.send({
        ...request,
        headers: {
          ...request.headers,
          authorization: `Bearer ${TOKEN}`,
          'x-service-webhook-challenge': 'chl_h',
        },
      });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text)).toMatchObject({
        type: 'urn:service-webhooks:problem:invalid-challenge',
      });
      expect(answer.text).not.toContain('"challenge":"chl');
      expect(answer.headers['x-service-webhook-challenge']).toBeUndefined();
      expect(runs.size).toBe(0);
    },
  );

  it('runs an event once: a redelivery after success is a duplicate, a failure is retried', async () => {
    const { door: d, runs } = await start();
    const event = issued({}, 'evt_once');
    expect(JSON.parse((await d.send(delivery(event))).text)).toMatchObject({ status: 'processed' });
    expect(JSON.parse((await d.send(delivery(event))).text)).toMatchObject({ status: 'duplicate' });
    expect(runs.get('evt_once')).toBe(1);
    const failing = issued({ title: 'fail' }, 'evt_fail');
    expect((await d.send(delivery(failing))).status).toBe(500);
    expect((await d.send(delivery(failing))).status).toBe(500);
    expect(runs.get('evt_fail')).toBe(2);
  });

  it('answers 409 to the same event while its first delivery runs, and never runs it twice at once', async () => {
    const started = gate("the first delivery's handler started");
    const release = gate('the test released the first handler');
    let runs = 0;
    const router = createEventRouter().on('ag.access_pass.issued', async () => {
      runs++;
      started.open();
      await release.opened;
    });
    const { door: d } = await start({ timeoutMs: 5000, router });
    const event = issued({}, 'evt_busy');
    const first = d.send(delivery(event));
    await started.opened;
    const second = await d.send(delivery(event));
    release.open();
    expect(second.status).toBe(409);
    expect(second.headers['retry-after']).toBe('30');
    expect((await first).status).toBe(200);
    expect(runs).toBe(1);
  });

  it.each([
    ['rejects', failingStore(async () => Promise.reject(new Error('ECONNREFUSED')))],
    ['never settles', failingStore(() => new Promise(() => undefined))],
  ])(
    'answers 503 when the store %s, within idempotency.timeoutMs, and runs no handler',
    async (_name, store) => {
      const { door: d, runs } = await start({ idempotency: { store, timeoutMs: 100 } });
      const started = Date.now();
      const answer = await d.send(delivery(issued()));
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('30');
      expect(JSON.parse(answer.text)).toMatchObject({
        type: 'urn:service-webhooks:problem:store-unavailable',
      });
      expect(Date.now() - started).toBeLessThan(2000);
      expect(runs.size).toBe(0);
    },
  );

  it('keeps one store for its events: a MemoryStore shared by the app sees the event done', async () => {
    const store = new MemoryStore();
    const { door: d } = await start({ idempotency: { store, scope: 'shop' } });
    await d.send(delivery(issued({}, 'evt_store')));
    expect(store.size).toBe(1);
    store.close();
  });

  // A failed markDone's retry and the fencing of a run that outlived its lease: receiver-on-stores.test.ts,
  // through every door on each of the three stores.
});
