import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import express from 'express';
import request from 'supertest';
import {
  bearerAuth,
  createEventRouter,
  createNodeHandler,
  MemoryStore,
  problemHandler,
  type AnyWebhookEvent,
  type IdempotencyStore,
  type Logger,
  type ReceiverOptions,
} from '../lib';
import { buildEvent, buildUnknownEvent, DELIVERY_HEADERS } from '../lib/testing';
import { DOORS, type OpenDoor, type RawRequest } from './support/doors';
import { pollUntil } from './support/poll-until';

const TOKEN = 'tok_hardening';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const delivery = (event: unknown, body?: string | Uint8Array): RawRequest => ({
  headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}` },
  body: body ?? JSON.stringify(event),
});
const isProblem = (answer: { status: number; headers: Record<string, string> }) =>
  /^application\/problem\+json/.test(answer.headers['content-type'] ?? '');

/** Fails the test if anything rejects unhandled or throws uncaught while it runs. */
function watchProcess() {
  const escaped: unknown[] = [];
  const onEscape = (error: unknown) => void escaped.push(error);
  process.on('unhandledRejection', onEscape);
  process.on('uncaughtException', onEscape);
  return {
    escaped,
    stop() {
      process.off('unhandledRejection', onEscape);
      process.off('uncaughtException', onEscape);
    },
  };
}

function errorWithThrowingStack(): Error {
  const error = new Error('boom');
  Object.defineProperty(error, 'stack', {
    get() {
      throw new Error('stack getter throws');
    },
  });
  return error;
}

function circularError(): Error {
  const error = new Error('circular') as Error & { request?: unknown };
  error.request = { error };
  return error;
}

describe.each(DOORS)('hardening through $name', (door) => {
  let open: OpenDoor | undefined;
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });
  async function start(options: Partial<ReceiverOptions>) {
    open = await door.open({ bearerTokens: [TOKEN], router: createEventRouter(), logger: false, ...options });
    return open;
  }

  // Issue 10, item 1: the logger and every hook are contained.
  it.each<[string, Logger | undefined, () => Error]>([
    [
      'a logger whose sink is down',
      {
        error: () => {
          throw new Error('sink down');
        },
        warn: () => {
          throw new Error('sink down');
        },
      },
      () => new Error('x'),
    ],
    [
      'a JSON.stringify logger given a circular error',
      { error: (meta: object) => JSON.stringify(meta) },
      circularError,
    ],
    [
      'an async logger that rejects',
      { error: async () => Promise.reject(new Error('sink down')) },
      () => new Error('x'),
    ],
    ['the default console logger and a throwing stack getter', undefined, errorWithThrowingStack],
  ])(
    'survives %s while a handler fails, and answers 500 unacknowledged',
    async (_name, logger, makeError) => {
      const watch = watchProcess();
      const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
      // How many times the logger was told an onError hook failed: 2 per request (one throws, one
      // rejects), the last of them once the rejection has been caught.
      let hookFailures = 0;
      const HOOK_FAILED = 'an onError handler threw';
      const counting =
        (log: (meta: object, message: string) => unknown) => (meta: object, message: string) => {
          if (message.includes(HOOK_FAILED)) hookFailures++;
          return log(meta, message);
        };
      const watched =
        logger &&
        (Object.fromEntries(
          Object.entries(logger).map(([level, log]) => [
            level,
            counting(log as (m: object, s: string) => unknown),
          ]),
        ) as Logger);
      const told = () =>
        logger
          ? hookFailures
          : error.mock.calls.filter((call) => call.some((part) => String(part).includes(HOOK_FAILED))).length;
      try {
        let runs = 0;
        const router = createEventRouter()
          .on('ag.hid_org.created', () => {
            runs++;
            throw makeError();
          })
          .onError(() => {
            throw new Error('onError throws too');
          })
          .onError(async () => Promise.reject(new Error('and rejects')))
          .onError(() => new Promise(() => undefined));
        const d = await start({ router, logger: watched });
        const event = buildEvent('ag.hid_org.created');
        const first = await d.send(delivery(event));
        const second = await d.send(delivery(event));
        await pollUntil('the logger told of 4 onError failures', () => told() >= 4, {
          describe: () => `told ${told()}`,
        });
        expect([first.status, second.status, isProblem(first)]).toEqual([500, 500, true]);
        expect(runs).toBe(2);
        expect(watch.escaped).toEqual([]);
      } finally {
        watch.stop();
        error.mockRestore();
      }
    },
  );

  it('an onDelivery that throws or rejects changes nothing and escapes nowhere', async () => {
    const watch = watchProcess();
    try {
      let calls = 0;
      const router = createEventRouter().on('ag.hid_org.created', () => undefined);
      const d = await start({
        router,
        onDelivery: () => {
          calls++;
          if (calls % 2) throw new Error('hook');
          return Promise.reject(new Error('hook'));
        },
      });
      expect((await d.send(delivery(buildEvent('ag.hid_org.created')))).status).toBe(200);
      expect((await d.send(delivery(buildEvent('ag.hid_org.created')))).status).toBe(200);
      // pollUntil gives one more turn, so the second call's rejection, had it escaped, is reported.
      await pollUntil('onDelivery called for both requests', () => calls >= 2);
      expect(calls).toBe(2);
      expect(watch.escaped).toEqual([]);
    } finally {
      watch.stop();
    }
  });

  // Item 2: a markDone that hangs is bounded; the answer and drain() are not held by it.
  it('acknowledges once handlers succeed although markDone hangs, and drain() still returns', async () => {
    const store: IdempotencyStore = {
      claim: async () => 'claimed',
      markDone: () => new Promise(() => undefined),
      release: async () => undefined,
      get: async () => null,
    };
    const router = createEventRouter().on('ag.hid_org.created', () => undefined);
    // markDone is retried in the background within half the lease (here 500 ms), then given up on.
    const d = await start({ router, idempotency: store, storeTimeoutMs: 100, timeoutMs: 500, leaseMs: 1000 });
    expect((await d.send(delivery(buildEvent('ag.hid_org.created')))).status).toBe(200);
    await expect(d.drain({ timeoutMs: 2000 })).resolves.toMatchObject({ drained: true, running: [] });
  });

  it('gives back a claim that lands after its 503, so the next delivery need not wait out the lease', async () => {
    const memory = new MemoryStore();
    let slow = true;
    const store: IdempotencyStore = {
      claim: async (key, token, lease) => {
        if (slow) await sleep(150);
        slow = false;
        return memory.claim(key, token, lease);
      },
      markDone: (key, token, retention) => memory.markDone(key, token, retention),
      release: (key, token) => memory.release(key, token),
      get: (key) => memory.get(key),
    };
    let runs = 0;
    const router = createEventRouter().on('ag.hid_org.created', () => void runs++);
    const d = await start({ router, idempotency: store, storeTimeoutMs: 50, leaseMs: 60_000 });
    const event = buildEvent('ag.hid_org.created');
    expect((await d.send(delivery(event))).status).toBe(503);
    await sleep(250);
    const again = await d.send(delivery(event));
    expect([again.status, JSON.parse(again.text).status, runs]).toEqual([200, 'processed', 1]);
    memory.close();
  });

  // Item 4: no two events share a key; long keys are hashed.
  it('keeps events apart whose source and id join the same way, and hashes a 900 KB id', async () => {
    const memory = new MemoryStore();
    const keys: string[] = [];
    const store: IdempotencyStore = {
      claim: (key, token, lease) => (keys.push(key), memory.claim(key, token, lease)),
      markDone: (key, token, retention) => memory.markDone(key, token, retention),
      release: (key, token) => memory.release(key, token),
      get: (key) => memory.get(key),
    };
    const ran: string[] = [];
    const router = createEventRouter().on('ag.hid_org.created', (event) => void ran.push(event.source));
    const d = await start({ router, idempotency: store });
    const a = { ...buildEvent('ag.hid_org.created'), source: 'src\u0000X', id: 'Y' };
    const b = { ...buildEvent('ag.hid_org.created'), source: 'src', id: 'X\u0000Y' };
    const big = { ...buildEvent('ag.hid_org.created'), id: 'i'.repeat(900_000) };
    const answers = [await d.send(delivery(a)), await d.send(delivery(b)), await d.send(delivery(big))];
    expect(answers.map((r) => JSON.parse(r.text).status)).toEqual(['processed', 'processed', 'processed']);
    expect(ran).toHaveLength(3);
    expect(new Set(keys).size).toBe(3);
    expect(Math.max(...keys.map((k) => k.length))).toBeLessThan(100);
    memory.close();
  });

  // Item 6: a handler that never settles is never started twice in this process.
  it('answers 409 to redeliveries of a hung event after its lease ran out, and drain() reports it', async () => {
    let started = 0;
    const router = createEventRouter().on('ag.hid_org.created', () => {
      started++;
      return new Promise(() => undefined);
    });
    const d = await start({ router, timeoutMs: 30, leaseMs: 60 });
    const event = buildEvent('ag.hid_org.created', {}, { id: 'evt_hung' });
    expect((await d.send(delivery(event))).status).toBe(503);
    await sleep(100);
    const again = await Promise.all([1, 2, 3].map(() => d.send(delivery(event))));
    expect(again.map((r) => r.status)).toEqual([409, 409, 409]);
    expect(started).toBe(1);
    const before = Date.now();
    await expect(d.drain({ timeoutMs: 150 })).resolves.toMatchObject({
      drained: false,
      running: ['evt_hung'],
    });
    expect(Date.now() - before).toBeLessThan(1000);
  });

  // Item 8: the errors list is capped, so a 1 MB body cannot make an 11 MB answer.
  it('caps the errors list of a body full of bad extension names', async () => {
    const d = await start({});
    const event: Record<string, unknown> = { ...buildEvent('ag.hid_org.created') };
    for (let i = 0; i < 40_000; i++) event[`Bad_${i}`] = 1;
    const answer = await d.send(delivery(event));
    expect(answer.status).toBe(400);
    const problem = JSON.parse(answer.text) as { errors: unknown[]; errorCount: number };
    expect(problem.errors).toHaveLength(20);
    expect(problem.errorCount).toBe(40_000);
    expect(answer.text.length).toBeLessThan(10_000);
  });

  // Item 9: rules 2–5 bind only the types they name.
  it.each([
    ['ag.access_pass.transferred', { devices: undefined }],
    ['ag.card_template.archived', { protocol: undefined, metadata: undefined }],
    ['ag.account_balance.recovered', { threshold: undefined }],
  ])('acknowledges a future %s in strict mode, through onAny', async (type, data) => {
    const seen: AnyWebhookEvent[] = [];
    const router = createEventRouter().onAny((event) => void seen.push(event));
    const d = await start({ router, validation: 'strict' });
    const answer = await d.send(delivery(buildUnknownEvent(type, data)));
    expect([answer.status, JSON.parse(answer.text).status]).toEqual([200, 'unhandled']);
    expect(seen.map((e) => e.type)).toEqual([type]);
  });

  // Item 10: strict UTF-8.
  it.each([
    ['FF FE', [0xff, 0xfe]],
    ['an overlong slash', [0xc0, 0xaf]],
    ['CESU-8 surrogates', [0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80]],
  ])('refuses %s in the body with 400, running nothing', async (_name, bytes) => {
    let runs = 0;
    const router = createEventRouter().onAny(() => void runs++);
    const d = await start({ router });
    const text = JSON.stringify(buildEvent('ag.hid_org.created', { hid_org_id: '@@' }));
    const [head, tail] = text.split('@@') as [string, string];
    const body = Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(tail)]);
    const answer = await d.send(delivery(null, body));
    expect([answer.status, JSON.parse(answer.text).type]).toEqual([
      400,
      'urn:service-webhooks:problem:invalid-utf8',
    ]);
    expect(runs).toBe(0);
  });

  // Item 11: an encoded body is refused, not misread.
  it('answers 415 to a real gzip body', async () => {
    const d = await start({});
    const body = gzipSync(JSON.stringify(buildEvent('ag.hid_org.created')));
    const answer = await d.send({
      ...delivery(null, body),
      headers: { ...delivery(null).headers, 'content-encoding': 'gzip' },
    });
    expect([answer.status, JSON.parse(answer.text).field]).toEqual([415, 'Content-Encoding']);
  });
});

/** Sends raw bytes to a door over TCP; resolves with the response head once it arrives. */
function rawSocket(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  return {
    write: (text: string) => socket.write(text),
    received: () => received,
    close: () => socket.destroy(),
  };
}

function postHead(path: string, length: number, extra = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/cloudevents+json\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: ${length}\r\n${extra}\r\n`;
}

describe('bounds on the wire (node:http and Express doors)', () => {
  async function server(options: Partial<ReceiverOptions>, serverOptions: http.ServerOptions = {}) {
    const handler = createNodeHandler({
      bearerTokens: [TOKEN],
      router: createEventRouter(),
      logger: false,
      ...options,
    });
    const srv = http.createServer(serverOptions, (req, res) => void handler(req, res));
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const port = (srv.address() as net.AddressInfo).port;
    return { handler, port, close: () => (srv.closeAllConnections(), srv.close()) };
  }

  // Item 12: a trickling body gets 408 with Connection: close, within bodyTimeoutMs.
  it('answers 408 to a body that stops arriving', async () => {
    const s = await server({ bodyTimeoutMs: 150 });
    const client = rawSocket(s.port);
    try {
      client.write(postHead('/', 1000));
      client.write('{"specversion":');
      await sleep(600);
      expect(client.received()).toMatch(/^HTTP\/1.1 408/);
      expect(client.received()).toMatch(/connection: close/i);
      expect(client.received()).toContain('urn:service-webhooks:problem:body-timeout');
    } finally {
      client.close();
      s.close();
    }
  });

  // node's parser refuses a body that disagrees with its Content-Length, unless the server was made
  // with insecureHTTPParser (or --insecure-http-parser, for old proxies): then a chunked body beside a
  // Content-Length is let through, the shape of a smuggled request, and the receiver refuses it itself.
  it('answers 400 to a chunked body that disagrees with its Content-Length (insecureHTTPParser)', async () => {
    let runs = 0;
    const s = await server(
      { router: createEventRouter().onAny(() => void runs++) },
      { insecureHTTPParser: true },
    );
    const body = JSON.stringify(buildEvent('ag.hid_org.created'));
    const client = rawSocket(s.port);
    try {
      const chunked = `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
      client.write(postHead('/', Buffer.byteLength(body) + 10, 'Transfer-Encoding: chunked\r\n') + chunked);
      await pollUntil('the receiver answered the mismatched body', () => client.received().includes('}'), {
        describe: () => JSON.stringify(client.received()),
      });
      expect(client.received()).toMatch(/^HTTP\/1.1 400/);
      expect(client.received()).toMatch(/connection: close/i);
      expect(client.received()).toContain('urn:service-webhooks:problem:body-length-mismatch');
      expect(runs).toBe(0);
    } finally {
      client.close();
      s.close();
    }
  });

  it('caps an unauthenticated handshake body at 4 KB', async () => {
    const s = await server({});
    try {
      const res = await fetch(`http://127.0.0.1:${s.port}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-webhook-challenge': 'chl' },
        body: JSON.stringify({ challenge: 'chl', pad: 'x'.repeat(5000) }),
      });
      expect(res.status).toBe(413);
    } finally {
      s.close();
    }
  });

  // Item 7: drain() counts a request from the moment it enters, mid-body or waiting on the store.
  it('drain() waits for a delivery whose body is still arriving', async () => {
    const ran: string[] = [];
    const router = createEventRouter().onAny((event) => void ran.push(event.id));
    const s = await server({ router });
    const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_arriving' }));
    const client = rawSocket(s.port);
    try {
      client.write(postHead('/', Buffer.byteLength(body)) + body.slice(0, 50));
      await sleep(50);
      let drained = false;
      const drain = s.handler.drain().then((result) => ((drained = true), result));
      await sleep(150);
      expect(drained).toBe(false);
      client.write(body.slice(50));
      await expect(drain).resolves.toMatchObject({ drained: true, requests: 0, running: [] });
      expect(ran).toEqual(['evt_arriving']);
    } finally {
      client.close();
      s.close();
    }
  });

  it('drain() waits for a delivery waiting on the store, and its handlers', async () => {
    const ran: string[] = [];
    const memory = new MemoryStore();
    const store: IdempotencyStore = {
      claim: async (key, token, lease) => (await sleep(200), memory.claim(key, token, lease)),
      markDone: (key, token, retention) => memory.markDone(key, token, retention),
      release: (key, token) => memory.release(key, token),
      get: (key) => memory.get(key),
    };
    const router = createEventRouter().onAny(async (event) => (await sleep(50), void ran.push(event.id)));
    const s = await server({ router, idempotency: store });
    try {
      const waiting = fetch(`http://127.0.0.1:${s.port}/`, {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_claiming' })),
      });
      await sleep(80);
      const result = await s.handler.drain();
      expect(ran).toEqual(['evt_claiming']);
      expect(result).toMatchObject({ drained: true, requests: 0, running: [] });
      expect((await waiting).status).toBe(200);
    } finally {
      s.close();
      memory.close();
    }
  });
});

// Item 3: whatever the error path does, the answer is problem+json with nothing internal in it.
describe('the Express error path', () => {
  it('answers problem+json, never Express’s HTML page, when the logger throws inside problemHandler', async () => {
    const app = express();
    const throwing: Logger = {
      error: () => {
        throw new Error('logger down');
      },
    };
    app.use(
      '/hooks',
      bearerAuth({ tokens: [TOKEN] }),
      () => {
        throw new Error('internal detail at /srv/app/secret.js:12');
      },
      problemHandler({ logger: throwing }),
    );
    const res = await request(app).post('/hooks').set('Authorization', `Bearer ${TOKEN}`).send('{}');
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.text).not.toMatch(/secret\.js|<html|at /);
  });
});
