import express from 'express';
import request from 'supertest';
import { createEventRouter, OptionsError, webhookReceiver } from '../lib';
import { deliverEvent, sendHandshake } from '../lib/testing';
import { captureLogger } from './support/capture-logger';

const TOKEN = 'tok_receiver_1';

function appWith(mount = '/webhooks', before: express.RequestHandler[] = []) {
  const handled: string[] = [];
  const router = createEventRouter()
    .on('ag.access_pass.issued', (event) => void handled.push(event.id))
    .on('ag.hid_org.created', () => {
      throw new Error('db password=hunter2 at /srv/app/secret.js:12');
    });
  const logger = captureLogger();
  const app = express();
  if (before.length > 0) app.use(...before);
  app.use(mount, webhookReceiver({ bearerTokens: [TOKEN], router, logger }));
  return { app, handled, logger };
}

describe('webhookReceiver', () => {
  it('acknowledges a valid delivery after its handler ran', async () => {
    const { app, handled } = appWith();
    const res = await deliverEvent(
      app,
      'ag.access_pass.issued',
      {},
      { token: TOKEN, path: '/webhooks', id: 'evt_1' },
    ).expect(200);
    expect(res.body).toEqual({ id: 'evt_1', type: 'ag.access_pass.issued', status: 'processed' });
    expect(handled).toEqual(['evt_1']);
  });

  it('works as a route handler too: app.post(path, receiver)', async () => {
    const handled: string[] = [];
    const router = createEventRouter().on('ag.access_pass.issued', (event) => void handled.push(event.id));
    const app = express();
    app.post('/hooks/service', webhookReceiver({ bearerTokens: [TOKEN], router, logger: false }));
    await deliverEvent(
      app,
      'ag.access_pass.issued',
      {},
      { token: TOKEN, path: '/hooks/service', id: 'evt_r' },
    ).expect(200);
    expect(handled).toEqual(['evt_r']);
  });

  it('answers the handshake', async () => {
    const { app } = appWith();
    const res = await sendHandshake(app, { path: '/webhooks', challenge: 'chl_42' }).expect(200);
    expect(res.body).toEqual({ challenge: 'chl_42' });
  });

  it.each(['get', 'put', 'patch', 'delete'] as const)(
    'answers %s with 405 and Allow: POST',
    async (method) => {
      const { app } = appWith();
      const res = await request(app)[method]('/webhooks').set('Authorization', `Bearer ${TOKEN}`).expect(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    },
  );

  it.each([['/'], ['/hooks/service'], ['/a/b/c']])('works mounted at %s', async (mount) => {
    const { app, handled } = appWith(mount);
    await deliverEvent(app, 'ag.access_pass.issued', {}, { token: TOKEN, path: mount }).expect(200);
    expect(handled).toHaveLength(1);
  });

  it.each([
    ['express.json() with a wide type', express.json({ type: '*/*' })],
    ['express.json() with its default type', express.json()],
    ['express.text() with a wide type', express.text({ type: '*/*' })],
  ])('works with the app’s own global parser in front: %s', async (_name, parser) => {
    const { app, handled } = appWith('/webhooks', [parser]);
    await deliverEvent(app, 'ag.access_pass.issued', {}, { token: TOKEN, path: '/webhooks' }).expect(200);
    expect(handled).toHaveLength(1);
  });

  it('answers 401 before reading a delivery with a wrong token', async () => {
    const { app, handled } = appWith();
    const res = await deliverEvent(
      app,
      'ag.access_pass.issued',
      {},
      { token: 'nope', path: '/webhooks' },
    ).expect(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(handled).toHaveLength(0);
  });

  it('sends an answer it has at once (a refused token) before it returns: no promise before the write', async () => {
    // Whether the answer was already written when the receiver, run by next(), returned.
    const sentBefore: boolean[] = [];
    const { app, handled } = appWith('/webhooks', [
      (_req, res, next) => {
        next();
        sentBefore.push(res.headersSent);
      },
    ]);
    await deliverEvent(app, 'ag.access_pass.issued', {}, { token: 'nope', path: '/webhooks' }).expect(401);
    expect(sentBefore).toEqual([true]);
    expect(handled).toHaveLength(0);
  });

  it('answers a failing handler with a 500 problem that leaks nothing of the error', async () => {
    const { app, logger } = appWith();
    const res = await deliverEvent(app, 'ag.hid_org.created', {}, { token: TOKEN, path: '/webhooks' }).expect(
      500,
    );
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Object.keys(res.body).sort()).toEqual(['detail', 'status', 'title', 'type']);
    expect(JSON.stringify(res.body)).not.toMatch(/hunter2|secret\.js|Error:/);
    expect(logger.messages('error').join()).toMatch(/a handler failed/);
  });

  it.each([
    ['no options', undefined, /webhookReceiver: options are required/],
    ['no router', { bearerTokens: [TOKEN] }, /router must come from createEventRouter/],
    ['no tokens', { router: createEventRouter() }, /webhookReceiver: bearerTokens must be a non-empty array/],
    ['a bad timeout', { bearerTokens: [TOKEN], router: createEventRouter(), timeoutMs: -5 }, /timeoutMs/],
    ['a bad limit', { bearerTokens: [TOKEN], router: createEventRouter(), limit: 'huge' }, /limit/],
    ['a bad logger', { bearerTokens: [TOKEN], router: createEventRouter(), logger: 'console' }, /logger/],
  ])('throws at construction for %s', (_name, options, message) => {
    expect(() => webhookReceiver(options as never)).toThrow(OptionsError);
    expect(() => webhookReceiver(options as never)).toThrow(message);
  });
});
