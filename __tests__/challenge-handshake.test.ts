import express from 'express';
import request from 'supertest';
import { challengeHandshake, OptionsError, problemHandler } from '../lib';
import { buildEvent } from '../lib/testing';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS } from './support/doors';
import { wireServer } from './support/wire-server';

function appWith(options?: Parameters<typeof challengeHandshake>[0]) {
  const app = express();
  const passed: string[] = [];
  app.use(challengeHandshake(options));
  app.use((req, res) => {
    passed.push(req.method);
    res.status(299).json({ passedOn: true });
  });
  app.use(problemHandler({ logger: false }));
  return { app, passed };
}

const handshake = (
  app: express.Express,
  challenge: string | undefined,
  body: unknown = challenge === undefined ? undefined : { challenge },
) => {
  const test = request(app).post('/').set('Content-Type', 'application/json');
  if (challenge !== undefined) test.set('X-Service-Webhook-Challenge', challenge);
  return body === undefined ? test : test.send(JSON.stringify(body));
};

describe('challengeHandshake', () => {
  it('echoes the challenge as JSON and in the header, uncacheable and nosniff', async () => {
    const { app, passed } = appWith();
    const res = await handshake(app, 'chl_abc123').expect(200);
    expect(res.body).toEqual({ challenge: 'chl_abc123' });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-service-webhook-challenge']).toBe('chl_abc123');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(passed).toEqual([]);
  });

  it("prefers the body's challenge over the header's", async () => {
    const { app } = appWith();
    const res = await handshake(app, 'from_header', { challenge: 'from_body' }).expect(200);
    expect(res.body).toEqual({ challenge: 'from_body' });
  });

  it.each([
    ['no body at all', undefined],
    ['a body without challenge', { other: 1 }],
    ['a body that is not JSON', 'not json'],
  ])("falls back to the header's value with %s", async (_name, body) => {
    const { app } = appWith();
    const test = request(app).post('/').set('X-Service-Webhook-Challenge', 'hdr_only');
    if (body !== undefined)
      test
        .set('Content-Type', 'application/json')
        .send(typeof body === 'string' ? body : JSON.stringify(body));
    const res = await test.expect(200);
    expect(res.body).toEqual({ challenge: 'hdr_only' });
  });

  it.each([
    ['empty header and no body', '', undefined],
    ['too long (513 characters)', 'a'.repeat(513), undefined],
    ['a space inside', 'abc def', { challenge: 'abc def' }],
    ['a control character', 'x', { challenge: 'abc\u0007' }],
    ['non-ASCII', 'x', { challenge: 'défi' }],
    ['a script', 'x', { challenge: '<script>alert(1)</script> ' }],
    ['a number', 'x', { challenge: 12345 }],
  ])('answers 400 and never echoes a challenge that is %s', async (_name, header, body) => {
    const { app } = appWith();
    const res = await handshake(app, header, body).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 400, field: 'challenge' });
    expect(res.headers['x-service-webhook-challenge']).toBeUndefined();
    const sent = typeof body === 'object' && body !== null ? String(body.challenge) : header;
    if (sent) expect(JSON.stringify(res.body)).not.toContain(sent);
  });

  it.each([
    [
      'a binary-mode event (ce-* headers)',
      { 'ce-specversion': '1.0', 'ce-id': 'evt_1', 'ce-type': 'ag.access_pass.issued' },
      { id: 'pass_1' },
    ],
    [
      'a structured event',
      {},
      { specversion: '1.0', id: 'evt_1', type: 'ag.access_pass.issued', challenge: 'c' },
    ],
  ])(
    'refuses %s sent with the challenge header (400) and passes nothing on',
    async (_name, headers, body) => {
      const { app, passed } = appWith();
      const res = await handshake(app, 'chl_abc', body).set(headers).expect(400);
      expect(res.body).toMatchObject({ status: 400, field: 'challenge' });
      expect(res.headers['x-service-webhook-challenge']).toBeUndefined();
      expect(passed).toEqual([]);
    },
  );

  it('accepts a 512-character challenge', async () => {
    const { app } = appWith();
    const challenge = 'c'.repeat(512);
    expect((await handshake(app, challenge).expect(200)).body).toEqual({ challenge });
  });

  it('refuses a handshake body over 4 KiB with 413', async () => {
    const { app } = appWith();
    await handshake(app, 'ok', { challenge: 'ok', pad: 'x'.repeat(5000) }).expect(413);
  });

  it('passes on requests without the challenge header, and non-POST requests, untouched', async () => {
    const { app, passed } = appWith();
    await request(app).post('/').send({ challenge: 'x' }).expect(299);
    await request(app).get('/').set('X-Service-Webhook-Challenge', 'x').expect(299);
    expect(passed).toEqual(['POST', 'GET']);
  });

  describe('with tokens', () => {
    const tokens = ['tok_live_1'];
    it.each([
      ['no Authorization header', undefined, 200],
      ['a valid token', 'Bearer tok_live_1', 200],
      ['a wrong token', 'Bearer nope', 401],
      ['a malformed header', 'Token x', 401],
    ])('requireToken false: %s (%s) → %d', async (_name, authorization, status) => {
      const { app } = appWith({ tokens });
      const test = handshake(app, 'chl_1');
      if (authorization) test.set('Authorization', authorization);
      const res = await test.expect(status);
      if (status === 401) {
        expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="service-webhooks"/);
        expect(res.headers['x-service-webhook-challenge']).toBeUndefined();
      }
    });

    it.each([
      ['no Authorization header', undefined, 401],
      ['a valid token', 'Bearer tok_live_1', 200],
    ])('requireToken true: %s (%s) → %d', async (_name, authorization, status) => {
      const { app } = appWith({ tokens, requireToken: true });
      const test = handshake(app, 'chl_1');
      if (authorization) test.set('Authorization', authorization);
      await test.expect(status);
    });
  });

  it.each([
    ['requireToken without tokens', { requireToken: true }],
    ['requireToken not a boolean', { requireToken: 'yes' }],
    ['empty tokens', { tokens: [] }],
  ])('throws at construction for %s', (_name, options) => {
    expect(() => challengeHandshake(options as never)).toThrow(OptionsError);
  });
});

describe.each(DOORS)('the challenge header through $name', (door) => {
  const TOKEN = 'tok_challenge';
  const start = doorReceiver(door, TOKEN);

  it('refuses an event sent with the challenge header instead of echoing it unprocessed', async () => {
    const { d, seen } = await start({});
    const answer = await d.send(
      tokenDelivery(TOKEN, buildEvent('ag.hid_org.created'), { 'x-service-webhook-challenge': 'abc' }),
    );
    expect([answer.status, answer.text.includes('abc')]).toEqual([400, false]);
    expect(seen).toEqual([]);
  });
});

describe('the handshake body on the wire', () => {
  const TOKEN = 'tok_challenge';

  it('caps an unauthenticated handshake body at 4 KB', async () => {
    const s = await wireServer(TOKEN, {});
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
});
