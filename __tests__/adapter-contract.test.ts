import { HTTP, CloudEvent } from 'cloudevents';
import {
  createEventRouter,
  type AnyWebhookEvent,
  MemoryStore,
  RetryLater,
  type IdempotencyStore,
  type ReceiverOptions,
} from '../lib';
import { buildEvent, buildUnknownEvent, DELIVERY_HEADERS } from '../lib/testing';
import { DOORS, fetchDoor, type OpenDoor, type RawRequest } from './support/doors';

const TOKEN = 'tok_contract';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function delivery(
  event: unknown,
  extra: Record<string, string> = {},
  body?: string | Uint8Array,
): RawRequest {
  return {
    headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}`, ...extra },
    body: body ?? JSON.stringify(event),
  };
}

/** Handlers that count runs by event id, and fail, refuse or hang on cue (by the event's `title`). */
function countingRouter() {
  const runs = new Map<string, number>();
  const handler = async (event: AnyWebhookEvent) => {
    runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
    const cue = (event.data as { title?: string | null }).title;
    if (cue === 'fail') throw new Error('secret=hunter2 at /srv/app.js');
    if (cue === 'retry-later') throw new RetryLater('downstream is down', { retryAfterSeconds: 7 });
    if (cue === 'slow') await sleep(300);
  };
  return { router: createEventRouter().on('ag.*', handler).onUnhandled(handler), runs };
}

const issued = (overrides: Record<string, unknown> = {}, id?: string) =>
  buildEvent('ag.access_pass.issued', overrides, id === undefined ? {} : { id });
const invalidUtf8 = Buffer.concat([
  Buffer.from('{"specversion":"1.0","id":"x'),
  Buffer.from([0xff, 0xfe]),
  Buffer.from('"}'),
]);
const binaryMode = (() => {
  const event = issued({}, 'evt_binary');
  const message = HTTP.binary(new CloudEvent({ ...event, data: event.data }));
  const headers = Object.fromEntries(
    Object.entries(message.headers).map(([k, v]) => [k.toLowerCase(), String(v)]),
  );
  return { headers: { ...headers, authorization: `Bearer ${TOKEN}` }, body: message.body as string };
})();

interface Row {
  name: string;
  request: RawRequest;
  status: number;
  /** The problem slug, for error answers. */
  slug?: string;
  /** The acknowledgement's `status`, for 200 answers. */
  outcome?: 'processed' | 'unhandled' | 'duplicate';
  headers?: Record<string, string | RegExp>;
  options?: Partial<ReceiverOptions>;
}

const ROWS: Row[] = [
  { name: 'a valid delivery', request: delivery(issued()), status: 200, outcome: 'processed' },
  {
    name: 'layout B',
    request: delivery(buildEvent('ag.access_pass.devices.added', {}, { layout: 'B' })),
    status: 200,
    outcome: 'processed',
  },
  { name: 'binary mode', request: binaryMode, status: 200, outcome: 'processed' },
  {
    name: 'a future type of a known family, without the fields its family carries',
    request: delivery(buildUnknownEvent('ag.access_pass.transferred', { devices: undefined })),
    status: 200,
    outcome: 'unhandled',
  },
  {
    name: 'GET',
    request: { method: 'GET', headers: { authorization: `Bearer ${TOKEN}` } },
    status: 405,
    slug: 'method-not-allowed',
    headers: { allow: 'POST' },
  },
  {
    name: 'no token',
    request: delivery(issued(), { authorization: '' }),
    status: 401,
    slug: 'missing-token',
    headers: { 'www-authenticate': /^Bearer realm=/ },
  },
  {
    name: 'a wrong token',
    request: delivery(issued(), { authorization: 'Bearer nope' }),
    status: 401,
    slug: 'invalid-token',
    headers: { 'www-authenticate': /invalid_token/ },
  },
  {
    name: 'a malformed Authorization',
    request: delivery(issued(), { authorization: 'Basic abc' }),
    status: 401,
    slug: 'invalid-token',
  },
  {
    name: 'a body over the limit',
    request: delivery(issued({ metadata: { pad: 'x'.repeat(3000) } })),
    status: 413,
    slug: 'payload-too-large',
    options: { limit: 2048 },
  },
  {
    name: 'text/plain',
    request: delivery(issued(), { 'content-type': 'text/plain' }),
    status: 415,
    slug: 'unsupported-media-type',
  },
  {
    name: 'a latin1 charset',
    request: delivery(issued(), { 'content-type': 'application/json; charset=latin1' }),
    status: 415,
    slug: 'unsupported-media-type',
  },
  {
    name: 'Content-Encoding: gzip',
    request: delivery(issued(), { 'content-encoding': 'gzip' }),
    status: 415,
    slug: 'unsupported-media-type',
  },
  { name: 'invalid JSON', request: delivery(null, {}, '{"specversion":'), status: 400, slug: 'invalid-json' },
  { name: 'an empty body', request: delivery(null, {}, ''), status: 400, slug: 'empty-body' },
  { name: 'invalid UTF-8', request: delivery(null, {}, invalidUtf8), status: 400, slug: 'invalid-utf8' },
  { name: 'a batch', request: delivery([issued()]), status: 400, slug: 'not-a-cloudevent' },
  {
    name: 'no specversion',
    request: delivery({ ...issued(), specversion: undefined }),
    status: 400,
    slug: 'invalid-cloudevent',
  },
  ...[' ', '\u0000', '\t\r\n', '\u0085'].map((id) => ({
    name: `an id of only ${JSON.stringify(id)}`,
    request: delivery({ ...issued(), id }),
    status: 400,
    slug: 'invalid-cloudevent',
  })),
  {
    name: 'a source of only spaces',
    request: delivery({ ...issued(), source: '   ' }),
    status: 400,
    slug: 'invalid-cloudevent',
  },
  {
    name: 'a bad extension name',
    request: delivery({ ...issued(), 'Bad-Name': 1 }),
    status: 400,
    slug: 'invalid-cloudevent',
  },
  {
    name: 'invalid UTF-8 in data_base64',
    request: delivery({
      ...issued(),
      data: undefined,
      data_base64: Buffer.from([0xc0, 0xaf]).toString('base64'),
    }),
    status: 400,
    slug: 'invalid-utf8',
  },
  {
    name: 'a mixed layout',
    request: delivery(issued({ access_pass_id: 'ap_1' })),
    status: 400,
    slug: 'mixed-layout',
  },
  {
    name: 'a broken per-type rule',
    request: delivery(issued({ details: undefined })),
    status: 400,
    slug: 'event-rule-violated',
  },
  {
    name: 'a failing handler',
    request: delivery(issued({ title: 'fail' })),
    status: 500,
    slug: 'handler-failed',
  },
  {
    name: 'a handler asking to retry later',
    request: delivery(issued({ title: 'retry-later' })),
    status: 503,
    slug: 'retry-later',
    headers: { 'retry-after': '7' },
  },
  {
    name: 'a handler past timeoutMs',
    request: delivery(issued({ title: 'slow' })),
    status: 503,
    slug: 'handler-timeout',
    headers: { 'retry-after': '30' },
    options: { timeoutMs: 50 },
  },
];

const failingStore = (claim: IdempotencyStore['claim']): IdempotencyStore => ({
  claim,
  markDone: async () => undefined,
  release: async () => undefined,
  get: async () => null,
});

describe.each(DOORS)('the receiver contract through $name', (door) => {
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
    const { door: d, runs } = await start({ timeoutMs: 1000 });
    const event = issued({ title: 'slow' }, 'evt_busy');
    const first = d.send(delivery(event));
    await sleep(50);
    const second = await d.send(delivery(event));
    expect(second.status).toBe(409);
    expect(second.headers['retry-after']).toBe('30');
    expect((await first).status).toBe(200);
    expect(runs.get('evt_busy')).toBe(1);
  });

  it.each([
    ['rejects', failingStore(async () => Promise.reject(new Error('ECONNREFUSED')))],
    ['never settles', failingStore(() => new Promise(() => undefined))],
  ])('answers 503 when the store %s, within storeTimeoutMs, and runs no handler', async (_name, store) => {
    const { door: d, runs } = await start({ idempotency: store, storeTimeoutMs: 100 });
    const started = Date.now();
    const answer = await d.send(delivery(issued()));
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('30');
    expect(JSON.parse(answer.text)).toMatchObject({ type: 'urn:service-webhooks:problem:store-unavailable' });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(runs.size).toBe(0);
  });

  it('keeps one store for its events: a MemoryStore shared by the app sees the event done', async () => {
    const store = new MemoryStore();
    const { door: d } = await start({ idempotency: store, name: 'shop' });
    await d.send(delivery(issued({}, 'evt_store')));
    expect(store.size).toBe(1);
    store.close();
  });

  it('answers 200 when markDone fails, holds the event while it retries markDone, then records it done', async () => {
    const memory = new MemoryStore();
    let failures = 2;
    const store: IdempotencyStore = {
      claim: (...args) => memory.claim(...args),
      release: (...args) => memory.release(...args),
      get: (key) => memory.get(key),
      markDone: (...args) =>
        failures-- > 0 ? Promise.reject(new Error('connection reset')) : memory.markDone(...args),
    };
    const bookkeeping: string[] = [];
    const onDelivery = Object.assign(() => undefined, {
      onBookkeeping: (e: string) => void bookkeeping.push(e),
    });
    const { door: d, runs } = await start({ idempotency: store, onDelivery });
    const event = issued({}, 'evt_markdone');
    expect(JSON.parse((await d.send(delivery(event))).text)).toMatchObject({ status: 'processed' });
    // While markDone is retried, the event stays held: a redelivery waits (409), it does not run again.
    expect((await d.send(delivery(event))).status).toBe(409);
    expect(await d.drain({ timeoutMs: 5000 })).toMatchObject({ drained: true });
    expect(bookkeeping).toEqual(['mark-done-recovered']);
    expect(JSON.parse((await d.send(delivery(event))).text)).toMatchObject({ status: 'duplicate' });
    expect(runs.get('evt_markdone')).toBe(1);
    memory.close();
  });

  it('fences a run that outlived its lease: its success does not cover up the failure of the run that took over', async () => {
    const store = new MemoryStore();
    let run = 0;
    const gates = [0, 1].map(() => {
      let open: () => void = () => undefined;
      const opened = new Promise<void>((resolve) => (open = resolve));
      return { open, opened };
    }) as [{ open(): void; opened: Promise<void> }, { open(): void; opened: Promise<void> }];
    const router = createEventRouter().on('ag.access_pass.issued', async () => {
      const mine = ++run;
      if (mine === 1) await gates[0].opened; // outlives its lease, then succeeds
      if (mine === 2) {
        await gates[1].opened; // took the lease over; fails after the first run succeeded
        throw new Error('the second run fails');
      }
    });
    const bookkeeping: string[] = [];
    const onDelivery = Object.assign(() => undefined, {
      onBookkeeping: (e: string) => void bookkeeping.push(e),
    });
    const options = { idempotency: store, timeoutMs: 20, leaseMs: 100, router, onDelivery };
    const { door: a } = await start(options);
    const b = await door.open({ bearerTokens: [TOKEN], logger: false, ...options });
    try {
      const event = issued({}, 'evt_overrun');
      expect((await a.send(delivery(event))).status).toBe(503); // past timeoutMs, still running
      await sleep(150); // the lease ran out
      const second = b.send(delivery(event));
      for (let i = 0; i < 200 && run < 2; i++) await sleep(5);
      expect(run).toBe(2);
      gates[0].open();
      await a.drain({ timeoutMs: 2000 });
      expect(bookkeeping).toEqual(['lease-lost']);
      gates[1].open();
      expect((await second).status).toBe(500);
      // The Service's next attempt runs the handler again instead of being told "duplicate".
      const third = await b.send(delivery(event));
      expect([third.status, JSON.parse(third.text).status]).toEqual([200, 'processed']);
      expect(run).toBe(3);
    } finally {
      await b.close();
      store.close();
    }
  });
});
