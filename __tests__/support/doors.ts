import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import {
  createFetchHandler,
  createNodeHandler,
  webhookReceiver,
  type DrainResult,
  type ReceiverOptions,
} from '../../lib';
import { serviceWebhooks } from '../../lib/fastify';

/** A request as a test writes it. */
export interface RawRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

/** An answer as a test reads it, whichever door it came through. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export interface OpenDoor {
  send(request: RawRequest): Promise<RawAnswer>;
  drain(options?: { timeoutMs?: number }): Promise<DrainResult>;
  close(): Promise<void>;
}

/** One way in to the receiver: Express, node:http, Fetch or the Fastify plugin. The contract tables run through each. */
export interface Door {
  name: string;
  open(options: ReceiverOptions): Promise<OpenDoor>;
}

export const PATH = '/webhooks';

async function listen(listener: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends `request` to `url` with fetch and reads the whole answer. */
export async function overHttp(url: string, request: RawRequest): Promise<RawAnswer> {
  const res = await fetch(url, {
    method: request.method ?? 'POST',
    headers: request.headers,
    body: request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body,
  });
  return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
}

export const expressDoor: Door = {
  name: 'Express webhookReceiver',
  async open(options) {
    const receiver = webhookReceiver(options);
    const app = express();
    app.use(PATH, receiver);
    const server = await listen(app);
    return { send: (r) => overHttp(server.url, r), drain: (o) => receiver.drain(o), close: server.close };
  },
};

export const nodeDoor: Door = {
  name: 'node:http createNodeHandler',
  async open(options) {
    const handler = createNodeHandler({ ...options, path: PATH });
    const server = await listen((req, res) => void handler(req, res));
    return { send: (r) => overHttp(server.url, r), drain: (o) => handler.drain(o), close: server.close };
  },
};

export const fetchDoor: Door = {
  name: 'Fetch createFetchHandler',
  async open(options) {
    const handler = createFetchHandler(options);
    return {
      async send(request) {
        const method = request.method ?? 'POST';
        const res = await handler(
          new Request(`http://127.0.0.1${PATH}`, {
            method,
            headers: request.headers,
            body: method === 'GET' || method === 'HEAD' ? undefined : request.body,
          }),
        );
        return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
      },
      drain: (o) => handler.drain(o),
      close: async () => undefined,
    };
  },
};

export const fastifyDoor: Door = {
  name: 'Fastify serviceWebhooks plugin',
  async open(options) {
    const app = Fastify();
    // The other doors' close() does not wait for handlers at all; a test's hung handler holds this one
    // a second, not the plugin's default of five.
    await app.register(serviceWebhooks, { drainTimeoutMs: 1000, ...options, prefix: PATH });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    return {
      send: (r) => overHttp(`${base}${PATH}`, r),
      drain: (o) => app.serviceWebhooks.drain(o),
      close: () => app.close(),
    };
  },
};

export const DOORS: readonly Door[] = [expressDoor, nodeDoor, fetchDoor, fastifyDoor];
