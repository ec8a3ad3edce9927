import net from 'node:net';
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { createEventRouter, type AnyWebhookEvent } from '../lib';
import { serviceWebhooks } from 'service-webhooks/fastify';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';
import { createDemoRouter } from '../demo-app/demo-receiver';
import { DEMO_TOKEN, playDemoScenario } from './support/demo-scenario';
import { gate } from './support/gate';
import { allBlocks, runBlocks } from './support/readme-blocks';
import { pollUntil } from './support/poll-until';
import { watchBodyReads } from './support/body-reads';

// Fastify 4, the older end of the peer range, installed beside 5 under an alias; typed as 5 here, its
// instance's API the plugin uses being the same.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the aliased package has no types of its own name
const Fastify4 = require('fastify4') as typeof Fastify;
const VERSIONS = [
  { name: 'Fastify 5', make: Fastify },
  { name: 'Fastify 4', make: Fastify4 },
];
let make: typeof Fastify = Fastify;

const TOKEN = 'tok_fastify';
const event = (id: string) => buildEvent('ag.access_pass.issued', {}, { id });

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(
  register: (app: FastifyInstance) => Promise<void> | void = () => undefined,
  handler: (event: AnyWebhookEvent) => unknown = () => undefined,
) {
  const seen: string[] = [];
  app = make();
  await register(app);
  await app.register(serviceWebhooks, {
    prefix: '/webhooks',
    bearerTokens: [TOKEN],
    router: createEventRouter().onAny(async (e) => {
      seen.push(e.id);
      await handler(e);
    }),
    logger: false,
  });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  return { base, seen };
}

function post(url: string, body: string, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}`, ...headers },
    body,
  });
}

/** Writes a request head alone, and returns what came back before any body byte was sent. */
async function headOnly(base: string, head: string): Promise<string> {
  const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString()));
  socket.write(head);
  try {
    await pollUntil('the answer head arrived', () => received.includes('\r\n\r\n'), { timeoutMs: 5000 });
  } finally {
    socket.destroy();
  }
  return received;
}

/** Sends event `id` with its body in the same write as its head, and returns the answer. */
async function withItsHead(base: string, id: string): Promise<string> {
  const body = JSON.stringify(event(id));
  const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString()));
  // Head and body in one write: on loopback they arrive in one packet.
  socket.write(
    'POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/cloudevents+json\r\n' +
      `Authorization: Bearer ${TOKEN}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  try {
    await pollUntil('answered', () => received.includes(id), { timeoutMs: 5000 });
  } finally {
    socket.destroy();
  }
  return received;
}

describe.each(VERSIONS)('serviceWebhooks, the Fastify plugin, on $name', (version) => {
  beforeEach(() => {
    make = version.make;
  });
  it('runs on the version it says', () => {
    expect(make().version).toMatch(version.name === 'Fastify 5' ? /^5\./ : /^4\./);
  });

  it('checks the token before any body byte arrives: a wrong token is answered 401 with the body unsent', async () => {
    const { base, seen } = await start();
    const answer = await headOnly(
      base,
      'POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/cloudevents+json\r\n' +
        'Authorization: Bearer wrong\r\nContent-Length: 5000\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1.1 401/);
    expect(answer).toMatch(/content-type: application\/problem\+json/i);
    expect(seen).toEqual([]);
  });

  it('takes a body sent with its head at once (readNow), never waiting on a read', async () => {
    const watch = watchBodyReads();
    try {
      const { base, seen } = await start();
      const received = await withItsHead(base, 'evt_fy_now');
      expect(received).toMatch(/^HTTP\/1.1 200/);
      expect(seen).toEqual(['evt_fy_now']);
      expect(watch.taken).toEqual({ now: 1, read: 0 });
    } finally {
      watch.restore();
    }
  });

  it('sends a delivery answered at once in the same microtask: no promise turn between the pipeline and the reply', async () => {
    const seen: string[] = [];
    // Whether the reply was already sent when a microtask queued just after the route's own
    // onRequest hook ran: the plugin's answer runs in the microtask before it.
    const sentBefore: boolean[] = [];
    app = make();
    app.addHook('onRequest', (_request, reply, done) => {
      done();
      queueMicrotask(() => sentBefore.push(reply.sent));
    });
    await app.register(serviceWebhooks, {
      prefix: '/webhooks',
      bearerTokens: [TOKEN],
      router: createEventRouter().onAny((e) => void seen.push(e.id)),
      logger: false,
    });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const received = await withItsHead(base, 'evt_fy_sync');
    expect(received).toMatch(/^HTTP\/1.1 200/);
    expect(seen).toEqual(['evt_fy_sync']);
    expect(sentBefore).toEqual([true]);
  });

  it('leaves the app its own body parsing: other routes parse JSON, the webhook route never reaches a parser', async () => {
    const parsed: string[] = [];
    const { base, seen } = await start((a) => {
      a.addContentTypeParser('application/cloudevents+json', { parseAs: 'string' }, (request, body, done) => {
        parsed.push(request.url);
        done(null, JSON.parse(body as string));
      });
      a.post('/echo', async (request) => request.body);
    });
    const echoed = await fetch(`${base}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(await echoed.json()).toEqual({ a: 1 });
    const res = await post(`${base}/webhooks`, JSON.stringify(event('evt_fy_parse')));
    expect(res.status).toBe(200);
    expect(parsed).toEqual([]);
    expect(seen).toEqual(['evt_fy_parse']);
  });

  // Fastify refuses a media type it cannot parse with a 415 of its own, before any hook of the route's
  // handler; the receiver answers first, so the token is checked and every answer is problem+json.
  it.each([
    ['no token', 401, {}],
    ['the token', 415, { authorization: `Bearer ${TOKEN}` }],
  ])(
    'answers a Content-Type Fastify cannot parse with %s as the receiver does (%d problem+json)',
    async (_, status, auth) => {
      const { base, seen } = await start();
      const res = await fetch(`${base}/webhooks`, {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, 'content-type': 'application/json; ;;', ...auth },
        body: JSON.stringify(event('evt_fy_media')),
      });
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(seen).toEqual([]);
    },
  );

  it("runs the app's hooks around the route: onRequest first, and onSend/onResponse see the answer", async () => {
    const calls: string[] = [];
    const { base, seen } = await start((a) => {
      a.addHook('onRequest', async (request) => void calls.push(`onRequest ${request.url}`));
      a.addHook('onSend', async (_request, reply, payload) => {
        calls.push(`onSend ${reply.statusCode} ${String(reply.getHeader('content-type'))}`);
        return payload;
      });
      a.addHook('onResponse', async (_request, reply) => void calls.push(`onResponse ${reply.statusCode}`));
    });
    const ack = await post(`${base}/webhooks`, JSON.stringify(event('evt_fy_hooks')));
    expect([ack.status, ack.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
    expect((await post(`${base}/webhooks`, '{}', { authorization: 'Bearer wrong' })).status).toBe(401);
    await pollUntil('both responses logged', () => calls.length === 6, { timeoutMs: 2000 });
    expect(calls).toEqual([
      'onRequest /webhooks',
      'onSend 200 application/json; charset=utf-8',
      'onResponse 200',
      'onRequest /webhooks',
      'onSend 401 application/problem+json; charset=utf-8',
      'onResponse 401',
    ]);
    expect(seen).toEqual(['evt_fy_hooks']);
  });

  it("never leaves a request hanging when node refuses a header an app's hook set: no 2xx, no unhandled rejection", async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => void rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const { base } = await start((a) => {
        a.addHook('onRequest', (_request, reply, done) => {
          reply.header('x-trace', 'bad\nvalue');
          done();
        });
      });
      const answered = await Promise.race([
        post(`${base}/webhooks`, JSON.stringify(event('evt_fy_bad_header'))).then(
          (res) => res.status,
          () => 'connection closed',
        ),
        new Promise((resolve) => setTimeout(resolve, 5000, 'no answer within 5 s')),
      ]);
      expect([500, 'connection closed']).toContain(answered);
      await new Promise((resolve) => setImmediate(resolve));
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  it("answers nothing itself when the app's own onRequest hook answered first, and runs no handler", async () => {
    const { base, seen } = await start((a) => {
      a.addHook('onRequest', async (_request, reply) => {
        await reply.code(429).send({ limited: true });
        return reply;
      });
    });
    const res = await post(`${base}/webhooks`, JSON.stringify(event('evt_fy_limited')));
    expect([res.status, await res.json()]).toEqual([429, { limited: true }]);
    expect(seen).toEqual([]);
  });

  it('drains on app.close(): a delivery whose handler is running is answered 200, and close waits for it', async () => {
    const started = gate('the handler started');
    const release = gate('released');
    const order: string[] = [];
    const { base } = await start(undefined, async () => {
      started.open();
      await release.opened;
      order.push('handler done');
    });
    const answered = post(`${base}/webhooks`, JSON.stringify(event('evt_fy_drain')));
    await started.opened;
    const closed = app!.close().then(() => void order.push('closed'));
    app = undefined;
    // close is waiting on the handler; let it finish.
    setTimeout(() => release.open(), 50);
    const res = await answered;
    await closed;
    expect(res.status).toBe(200);
    expect(order).toEqual(['handler done', 'closed']);
  });

  it("bounds close()'s wait for a handler that never settles below the app's pluginTimeout", async () => {
    const started = gate('the handler started');
    app = make({ pluginTimeout: 400 });
    await app.register(serviceWebhooks, {
      bearerTokens: [TOKEN],
      router: createEventRouter().onAny(() => {
        started.open();
        return new Promise(() => undefined);
      }),
      logger: false,
      timeoutMs: 50,
    });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    expect((await post(`${base}/webhooks`, JSON.stringify(event('evt_fy_hung')))).status).toBe(503);
    await started.opened;
    const closing = app;
    app = undefined;
    // With the drain as long as pluginTimeout, Fastify would reject close() with a hook timeout.
    await expect(closing.close()).resolves.toBeUndefined();
  });

  it('decorates app.serviceWebhooks.drain(), which reports what still runs', async () => {
    const started = gate('the handler started');
    const release = gate('released');
    const { base } = await start(undefined, async () => {
      started.open();
      await release.opened;
    });
    const answered = post(`${base}/webhooks`, JSON.stringify(event('evt_fy_decor')));
    await started.opened;
    expect(await app!.serviceWebhooks.drain({ timeoutMs: 20 })).toMatchObject({
      drained: false,
      running: ['evt_fy_decor'],
    });
    release.open();
    expect((await answered).status).toBe(200);
    expect(await app!.serviceWebhooks.drain({ timeoutMs: 2000 })).toEqual({
      drained: true,
      requests: 0,
      running: [],
    });
  });

  it("logs through the app's logger when given no logger of its own", async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    app = make({ logger: { level: 'warn', stream } });
    await app.register(serviceWebhooks, {
      bearerTokens: [TOKEN],
      // A returned value is warned about once (the receiver ignores it).
      router: createEventRouter().onAny(() => 'ok'),
    });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    expect((await post(`${base}/webhooks`, JSON.stringify(event('evt_fy_log')))).status).toBe(200);
    await pollUntil('a warning logged', () => lines.length > 0, { timeoutMs: 2000 });
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      level: 40,
      msg: expect.stringMatching(/^\[service-webhooks\] /),
    });
  });

  it.each([
    [{ bearerToken: [TOKEN] }, /bearerToken.*did you mean "bearerTokens"/],
    [{ prefix: 'webhooks' }, /prefix must be a string starting with "\/"/],
    [{ drainTimeoutMs: -1 }, /drainTimeoutMs must be a finite number/],
    [{ drainTimeoutMs: 10_000 }, /drainTimeoutMs \(10000\) must be below the app's pluginTimeout \(10000\)/],
  ])('refuses bad options when the app loads: %j', async (bad, message) => {
    app = make();
    const options = { bearerTokens: [TOKEN], router: createEventRouter(), logger: false as const, ...bad };
    await expect(app.register(serviceWebhooks, options).ready()).rejects.toThrow(message);
  });

  it('refuses a second receiver on the same app, naming what to do', async () => {
    app = make();
    const options = { bearerTokens: [TOKEN], router: createEventRouter(), logger: false as const };
    app.register(serviceWebhooks, options);
    app.register(serviceWebhooks, { ...options, prefix: '/other' });
    await expect(app.ready()).rejects.toThrow(/\[service-webhooks\].*already has a receiver/);
  });

  it('declares itself as fastify-plugin does: named, for Fastify 4 and 5, not encapsulated', () => {
    const plugin = serviceWebhooks as unknown as Record<symbol, unknown>;
    expect(plugin[Symbol.for('skip-override')]).toBe(true);
    expect(plugin[Symbol.for('plugin-meta')]).toEqual({ name: 'service-webhooks', fastify: '4.x || 5.x' });
  });
});

describe.each(VERSIONS)("the demo's scenario against the plugin on $name", (version) => {
  it('meets every expectation of scenarios/demo.json, each event handled once, beside a route of its own', async () => {
    const demo = createDemoRouter();
    app = version.make();
    // A JSON route of the app's own: the plugin's route must not change how Fastify parses it.
    app.post('/orders', async (request) => ({ received: request.body }));
    await app.register(serviceWebhooks, {
      prefix: '/webhooks',
      bearerTokens: [DEMO_TOKEN],
      router: demo.router,
      logger: false,
    });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const instance = app;
    await playDemoScenario(base, '/webhooks', demo.handled, () => instance.serviceWebhooks.drain());
    const order = await fetch(`${base}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"n":2}',
    });
    expect(await order.json()).toEqual({ received: { n: 2 } });
  });
});

describe("docs/frameworks.md's Fastify app, run as written", () => {
  it('receives a delivery at /webhooks and still parses the JSON of its own routes', async () => {
    const block = allBlocks().find((b) => b.doc === 'docs/frameworks.md' && b.file === 'src/fastify-app.ts');
    expect(block?.run).toBe(true);
    process.env.SERVICE_WEBHOOK_TOKEN = TOKEN;
    const { buildApp } = runBlocks([block!]).get(block!.file) as { buildApp: () => FastifyInstance };
    app = buildApp();
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const res = await post(`${base}/webhooks`, JSON.stringify(event('evt_fy_docs')));
    expect([res.status, await res.json()]).toEqual([
      200,
      { id: 'evt_fy_docs', type: 'ag.access_pass.issued', status: 'processed' },
    ]);
    expect((await post(`${base}/webhooks`, '{}', { authorization: 'Bearer wrong' })).status).toBe(401);
    const order = await fetch(`${base}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"n":1}',
    });
    expect(await order.json()).toEqual({ received: { n: 1 } });
  });
});
