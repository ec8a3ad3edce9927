import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { createEventRouter, createFetchHandler, createNodeHandler } from '../lib';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';

const TOKEN = 'tok_frameworks';

function setup() {
  const handled: string[] = [];
  const router = createEventRouter().on('ag.access_pass.issued', (event) => void handled.push(event.id));
  return { handled, options: { bearerTokens: [TOKEN], router, logger: false as const } };
}

function deliver(url: string, id: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(buildEvent('ag.access_pass.issued', {}, { id })),
  });
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('createNodeHandler inside other frameworks', () => {
  it('serves a Fastify route through the raw request and reply, other routes untouched', async () => {
    const { handled, options } = setup();
    const handler = createNodeHandler(options);
    const app = Fastify();
    // Fastify must not parse the body: the receiver reads it, bounded, after checking the token.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    app.post('/webhooks', async (request, reply) => {
      reply.hijack();
      await handler(request.raw, reply.raw);
    });
    app.get('/health', async () => ({ ok: true }));
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const res = await deliver(`${base}/webhooks`, 'evt_fastify');
      expect([res.status, await res.json()]).toEqual([
        200,
        { id: 'evt_fastify', type: 'ag.access_pass.issued', status: 'processed' },
      ]);
      const refused = await fetch(`${base}/webhooks`, {
        method: 'POST',
        headers: DELIVERY_HEADERS,
        body: '{}',
      });
      expect(refused.status).toBe(401);
      expect(await (await fetch(`${base}/health`)).json()).toEqual({ ok: true });
      expect(handled).toEqual(['evt_fastify']);
    } finally {
      await app.close();
    }
  });

  it('serves Koa at its path and calls next for the others', async () => {
    const { handled, options } = setup();
    const handler = createNodeHandler({ ...options, path: '/webhooks' });
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (ctx.path !== '/webhooks') return next();
      ctx.respond = false;
      await handler(ctx.req, ctx.res);
    });
    app.use((ctx) => {
      ctx.body = 'the rest of the app';
    });
    const server = http.createServer(app.callback());
    const base = await listen(server);
    try {
      const res = await deliver(`${base}/webhooks`, 'evt_koa');
      expect(res.status).toBe(200);
      expect(await (await fetch(`${base}/other`)).text()).toBe('the rest of the app');
      expect(handled).toEqual(['evt_koa']);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('answers 404 problem+json for another path when no next is given', async () => {
    const { options } = setup();
    const server = http.createServer(createNodeHandler({ ...options, path: '/webhooks' }));
    const base = await listen(server);
    try {
      const res = await deliver(`${base}/elsewhere`, 'evt_404');
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await deliver(`${base}/webhooks?x=1`, 'evt_query')).status).toBe(200);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
  it("settles its promise once the answer is written, and hands another path to next, a throwing next's error as a rejection", async () => {
    const { options } = setup();
    const handler = createNodeHandler({ ...options, path: '/webhooks' });
    const settled: string[] = [];
    const server = http.createServer((req, res) => {
      let promise: Promise<void> | undefined;
      try {
        promise = handler(req, res, () => {
          if (req.url === '/throws') throw new Error('next failed');
          return new Promise<void>((resolve) => setTimeout(() => resolve(void res.end('next')), 20));
        });
      } catch {
        settled.push(`${req.url} threw`);
        res.end('threw');
        return;
      }
      promise.then(
        () => settled.push(`${req.url} resolved, answer written: ${res.writableEnded}`),
        (error: Error) => (settled.push(`${req.url} rejected: ${error.message}`), res.end('rejected')),
      );
    });
    const base = await listen(server);
    try {
      expect((await deliver(`${base}/webhooks`, 'evt_settled')).status).toBe(200);
      expect(await (await fetch(`${base}/other`)).text()).toBe('next');
      expect(await (await fetch(`${base}/throws`)).text()).toBe('rejected');
      expect(settled).toEqual([
        '/webhooks resolved, answer written: true',
        '/other resolved, answer written: true',
        '/throws rejected: next failed',
      ]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('createFetchHandler', () => {
  it('serves Hono through app.fetch', async () => {
    const { handled, options } = setup();
    const handler = createFetchHandler(options);
    const app = new Hono();
    app.post('/webhooks', (c) => handler(c.req.raw));
    const res = await app.fetch(
      new Request('http://app.local/webhooks', {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(buildEvent('ag.access_pass.issued', {}, { id: 'evt_hono' })),
      }),
    );
    expect([res.status, await res.json()]).toEqual([
      200,
      { id: 'evt_hono', type: 'ag.access_pass.issued', status: 'processed' },
    ]);
    expect(handled).toEqual(['evt_hono']);
  });

  it('refuses a streamed body past the limit without reading it all', async () => {
    const { handled, options } = setup();
    const handler = createFetchHandler({ ...options, limit: 1024 });
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        if (pulled > 1000) controller.close();
        else controller.enqueue(new Uint8Array(512));
      },
    });
    const res = await handler(
      new Request('http://app.local/webhooks', {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}` },
        body,
        duplex: 'half',
      } as RequestInit),
    );
    expect(res.status).toBe(413);
    expect(pulled).toBeLessThan(10);
    expect(handled).toEqual([]);
  });
});
