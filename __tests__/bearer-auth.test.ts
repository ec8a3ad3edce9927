import http from 'node:http';
import express from 'express';
import request from 'supertest';
import { bearerAuth, OptionsError, problemHandler } from '../lib';
import { listen } from './support/listen';
import { gate } from './support/gate';

function appWith(tokens: string[], reached: { count: number } = { count: 0 }) {
  const app = express();
  app.post('/', bearerAuth({ tokens }), (_req, res) => {
    reached.count++;
    res.status(200).json({ ok: true });
  });
  app.use(problemHandler({ logger: false }));
  return app;
}

describe('bearerAuth', () => {
  it.each([
    ['exact scheme', 'Bearer tok_live_1'],
    ['lowercase scheme', 'bearer tok_live_1'],
    ['uppercase scheme', 'BEARER tok_live_1'],
    ['second token during a rotation', 'Bearer tok_next_2'],
  ])('accepts a valid token: %s', async (_name, header) => {
    const reached = { count: 0 };
    await request(appWith(['tok_live_1', 'tok_next_2'], reached))
      .post('/')
      .set('Authorization', header)
      .expect(200);
    expect(reached.count).toBe(1);
  });

  it.each([
    ['missing header', undefined, 'Bearer realm="service-webhooks"'],
    ['wrong token', 'Bearer tok_wrong', 'Bearer realm="service-webhooks", error="invalid_token"'],
    ['prefix of the token', 'Bearer tok_live', 'Bearer realm="service-webhooks", error="invalid_token"'],
    ['token plus suffix', 'Bearer tok_live_1x', 'Bearer realm="service-webhooks", error="invalid_token"'],
    ['other scheme', 'Basic dG9rOg==', 'Bearer realm="service-webhooks", error="invalid_request"'],
    ['scheme without token', 'Bearer', 'Bearer realm="service-webhooks", error="invalid_request"'],
  ])('answers 401 problem+json: %s', async (_name, header, challenge) => {
    const reached = { count: 0 };
    const test = request(appWith(['tok_live_1'], reached)).post('/');
    if (header !== undefined) test.set('Authorization', header);
    const res = await test.expect(401);
    expect(res.headers['www-authenticate']).toBe(challenge);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 401, title: 'Unauthorized', field: 'Authorization' });
    expect(JSON.stringify(res.body)).not.toContain('tok_live_1');
    expect(reached.count).toBe(0);
  });

  it.each([
    ['no options', undefined],
    ['no tokens', {}],
    ['an empty list', { tokens: [] }],
    ['an empty string', { tokens: [''] }],
    ['a non-string', { tokens: [42] }],
    ['a token with a space', { tokens: ['a b'] }],
    ['a string instead of a list', { tokens: 'tok' }],
  ])('throws at construction for %s', (_name, options) => {
    expect(() => bearerAuth(options as never)).toThrow(OptionsError);
    expect(() => bearerAuth(options as never)).toThrow(/^\[service-webhooks\] bearerAuth: tokens/);
  });

  it.each([
    ['valid first', ['Bearer tok_live_1', 'Bearer tok_wrong']],
    ['valid second', ['Bearer tok_wrong', 'Bearer tok_live_1']],
    ['valid twice', ['Bearer tok_live_1', 'Bearer tok_live_1']],
  ])(
    'answers 401 to two Authorization lines (%s), joined as the receivers join them',
    async (_name, lines) => {
      const reached = { count: 0 };
      const server = await listen(appWith(['tok_live_1'], reached));
      try {
        const status = await new Promise<number>((resolve, reject) => {
          const req = http.request({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/' });
          // An array value is sent as one header line per element, as a proxy that appends one would.
          req.setHeader('Authorization', lines);
          req.on('response', (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          req.on('error', reject);
          req.end();
        });
        expect(status).toBe(401);
        expect(reached.count).toBe(0);
      } finally {
        await server.close();
      }
    },
  );

  it('does not put a configured token in a construction error', () => {
    try {
      bearerAuth({ tokens: ['secret_token_1', ''] });
    } catch (error) {
      expect(String(error)).not.toContain('secret_token_1');
      expect((error as OptionsError).code).toBe('ERR_SW_TOKENS');
    }
    expect.assertions(2);
  });

  it('answers 401 to a 50 MB body with a wrong token without reading the body', async () => {
    const TOTAL = 50 * 1024 * 1024;
    const reached = { count: 0 };
    const app = express();
    const closed = gate<number>('the receiver closed its 401 response');
    app.use((req, res, next) => {
      res.on('close', () => closed.open(req.socket.bytesRead));
      next();
    });
    app.use(appWith(['tok_live_1'], reached));
    const heapBefore = process.memoryUsage().heapUsed;
    const server = await listen(app);
    try {
      const { status, written } = await new Promise<{ status: number; written: number }>(
        (resolve, reject) => {
          const chunk = Buffer.alloc(64 * 1024, 0x61);
          let written = 0;
          let answered = false;
          const req = http.request({
            host: '127.0.0.1',
            port: server.port,
            method: 'POST',
            path: '/',
            headers: {
              'content-type': 'application/cloudevents+json',
              'content-length': TOTAL,
              authorization: 'Bearer tok_wrong',
            },
          });
          const pump = () => {
            while (!answered && written < TOTAL) {
              written += chunk.length;
              if (!req.write(chunk)) return void req.once('drain', pump);
            }
          };
          req.on('response', (res) => {
            answered = true;
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, written }));
          });
          req.on('error', (error) => (answered ? undefined : reject(error)));
          pump();
        },
      );
      const serverBytesRead = await closed.opened;
      expect(status).toBe(401);
      expect(reached.count).toBe(0);
      // The server read at most what the socket buffers held, never the 50 MB body.
      expect(serverBytesRead).toBeGreaterThan(0);
      expect(serverBytesRead).toBeLessThan(TOTAL / 5);
      expect(written).toBeLessThan(TOTAL);
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(TOTAL / 2);
    } finally {
      await server.close();
    }
  });
});
