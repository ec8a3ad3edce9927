import express from 'express';
import {
  bearerAuth,
  createEventRouter,
  createFetchHandler,
  problemHandler,
  webhookReceiver,
  type TokenSource,
} from 'service-webhooks';
import http from 'node:http';
import net from 'node:net';
import { createNodeHandler } from 'service-webhooks';
import { buildEvent, deliverEvent, sendHandshake } from 'service-webhooks/testing';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS } from './support/doors';
import { pollUntil } from './support/poll-until';

/** A receiver whose handler records what it ran, so an answer can be checked against the work done. */
function receiverWith(bearerTokens: TokenSource, extra: { requireTokenOnHandshake?: boolean } = {}) {
  const handled: string[] = [];
  const router = createEventRouter().on('ag.hid_org.created', (event) => void handled.push(event.id));
  const app = express().use(webhookReceiver({ bearerTokens, router, logger: false, ...extra }));
  const deliver = (token?: string) =>
    deliverEvent(app, 'ag.hid_org.created', {}, token === undefined ? {} : { token });
  return { app, handled, deliver };
}

const SOURCES: [string, (current: () => readonly string[]) => TokenSource][] = [
  ['a sync function', (current) => () => current()],
  ['an async function', (current) => async () => current()],
  [
    'a function returning a promise resolved later',
    (current) => () => new Promise((r) => setTimeout(r, 5, current())),
  ],
];

describe.each(SOURCES)('bearerTokens as %s', (_name, source) => {
  it('takes a token that arrives after the receiver was built (none yet: 503, not 401)', async () => {
    let tokens: string[] = [];
    const { deliver, handled } = receiverWith(source(() => tokens));
    // No token yet: the source returns an unusable list, so the Service is asked to retry, not refused.
    const early = await deliver('tok_late').expect(503);
    expect(early.headers['retry-after']).toBe('30');
    expect(early.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(handled).toEqual([]);
    tokens = ['tok_late'];
    const res = await deliver('tok_late').expect(200);
    expect(handled).toEqual([res.body.id]);
  });

  it('follows a rotation: old and new both valid during it, then only the new one', async () => {
    let tokens = ['tok_old'];
    const { deliver } = receiverWith(source(() => tokens));
    await deliver('tok_old').expect(200);
    await deliver('tok_new').expect(401);
    tokens = ['tok_old', 'tok_new'];
    await deliver('tok_old').expect(200);
    await deliver('tok_new').expect(200);
    tokens = ['tok_new'];
    await deliver('tok_old').expect(401);
    await deliver('tok_new').expect(200);
    await deliver().expect(401);
  });

  it('is called on every request, so the current list always decides', async () => {
    let calls = 0;
    const { deliver } = receiverWith(
      source(() => {
        calls++;
        return ['tok_1'];
      }),
    );
    for (let i = 0; i < 3; i++) await deliver('tok_1').expect(200);
    expect(calls).toBe(3);
  });

  it('checks the handshake against the current list when requireTokenOnHandshake is on', async () => {
    let tokens = ['tok_1'];
    const { app } = receiverWith(
      source(() => tokens),
      { requireTokenOnHandshake: true },
    );
    await sendHandshake(app, { challenge: 'c1', token: 'tok_1' }).expect(200, { challenge: 'c1' });
    tokens = ['tok_2'];
    await sendHandshake(app, { challenge: 'c2', token: 'tok_1' }).expect(401);
    await sendHandshake(app, { challenge: 'c3', token: 'tok_2' }).expect(200, { challenge: 'c3' });
  });
});

describe('a token source that fails answers 503 (retry later), never 200 and never runs a handler', () => {
  const failing: [string, TokenSource][] = [
    [
      'throws',
      () => {
        throw new Error('vault down');
      },
    ],
    ['rejects', async () => Promise.reject(new Error('vault down'))],
    ['returns an empty list', () => []],
    ['returns a string, not a list', () => 'tok_1' as unknown as string[]],
    ['returns an empty token', () => ['']],
  ];
  // A source returning undefined (a token cache not filled yet: `() => cache.tokens`) once matched the
  // verifier's empty cache and was compared as an empty list: 401, and the Service dropped the event
  // after 6 hours. It is 503 now, so the Service retries until the token arrives.
  const undefinedSources: [string, TokenSource][] = [
    ['returns undefined', () => undefined as unknown as string[]],
    ['resolves to undefined', async () => undefined as unknown as string[]],
  ];

  it.each(failing)('a source that %s', async (_name, tokens) => {
    const { deliver, handled } = receiverWith(tokens);
    const res = await deliver('tok_1').expect(503);
    expect(res.body).toMatchObject({ status: 503, title: 'Service Unavailable' });
    expect(res.headers['retry-after']).toBe('30');
    expect(handled).toEqual([]);
  });

  it.each(failing)('a source that %s, through createFetchHandler', async (_name, tokens) => {
    const handler = createFetchHandler({ bearerTokens: tokens, router: createEventRouter(), logger: false });
    const response = await handler(
      new Request('http://receiver.test/', {
        method: 'POST',
        headers: { 'content-type': 'application/cloudevents+json', authorization: 'Bearer tok_1' },
        body: JSON.stringify(buildEvent('ag.hid_org.created')),
      }),
    );
    expect(response.status).toBe(503);
  });

  it.each(undefinedSources)('a source that %s', async (_name, tokens) => {
    const { deliver, handled } = receiverWith(tokens);
    await deliver('tok_1').expect(503);
    expect(handled).toEqual([]);
  });

  it('recovers once the source works again', async () => {
    let fail = true;
    const { deliver, handled } = receiverWith(() => {
      if (fail) throw new Error('vault down');
      return ['tok_1'];
    });
    await deliver('tok_1').expect(503);
    fail = false;
    await deliver('tok_1').expect(200);
    expect(handled).toHaveLength(1);
  });
});

describe('bearerAuth({ tokens }) takes a function too', () => {
  function stepApp(tokens: TokenSource) {
    const app = express();
    app.post('/hook', bearerAuth({ tokens }), (_req, res) => void res.json({ passed: true }));
    app.use(problemHandler({ logger: false }));
    return app;
  }

  it.each(SOURCES)('%s: valid, rotated, and failing sources', async (_name, source) => {
    let tokens = ['tok_a'];
    let fail = false;
    const app = stepApp(
      source(() => {
        if (fail) throw new Error('vault down');
        return tokens;
      }),
    );
    const send = (token: string) => deliverEvent(app, 'ag.hid_org.created', {}, { token, path: '/hook' });
    await send('tok_a').expect(200, { passed: true });
    tokens = ['tok_b'];
    await send('tok_a').expect(401);
    await send('tok_b').expect(200);
    fail = true;
    await send('tok_b').expect(503);
  });
});

const TOKEN = 'tok_sources';

describe.each(DOORS)('token lists through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it('sees a token list the app updates in place: the rotated token works, the revoked one does not', async () => {
    const list = ['tok_old'];
    const { d } = await start({ bearerTokens: () => list });
    const send = (token: string) =>
      d.send(tokenDelivery(TOKEN, buildEvent('ag.hid_org.created'), { authorization: `Bearer ${token}` }));
    expect((await send('tok_old')).status).toBe(200);
    list.splice(0, 1, 'tok_new');
    expect([(await send('tok_old')).status, (await send('tok_new')).status]).toEqual([401, 200]);
  });

  it('bounds an async token function that never settles: 503 within bearerTokensTimeoutMs', async () => {
    const { d, seen } = await start({
      bearerTokens: () => new Promise<string[]>(() => undefined),
      bearerTokensTimeoutMs: 100,
    });
    const answer = await d.send(tokenDelivery(TOKEN, buildEvent('ag.hid_org.created')));
    expect([answer.status, answer.headers['retry-after']]).toEqual([503, '30']);
    expect(seen).toEqual([]);
    await expect(d.drain({ timeoutMs: 1000 })).resolves.toMatchObject({ drained: true, requests: 0 });
  });
});

describe('two Authorization lines', () => {
  it('refuses two Authorization lines through node:http as the Fetch API does (joined), whichever is right', async () => {
    const handler = createNodeHandler({ bearerTokens: [TOKEN], router: createEventRouter(), logger: false });
    const server = http.createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const body = JSON.stringify(buildEvent('ag.hid_org.created'));
    const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.write(
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Authorization: Bearer wrong\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await pollUntil('the answer head arrived', () => received.includes('\r\n\r\n'), { timeoutMs: 2000 });
    socket.destroy();
    server.close();
    expect(received).toMatch(/^HTTP\/1.1 401/);
  });
});
