// One receiver per process, so each is measured alone: `node bench-server.js <kind>`. It reports its
// port, then its CPU time and request count between 'start' and 'stop' messages from the parent.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { createEventRouter, createNodeHandler, webhookReceiver, type ReceiverOptions } from '../lib';
import { serviceWebhooks } from '../lib/fastify';
import { TOKEN } from './bench-events';
import { fastifyContractFloor } from './fastify-contract-floor';

export const OCTOKIT_SECRET = 'bench-secret';
export const KINDS = [
  'node:http + JSON.parse',
  'express.json() route',
  'octokit createNodeMiddleware',
  'ours: Express',
  'ours: createNodeHandler',
  'ours: Express + RedisStore',
  'Fastify JSON route',
  'ours: Fastify plugin',
  'Fastify contract floor',
] as const;
export type Kind = (typeof KINDS)[number];

// With its length, as a competent hand-written server answers (and Fastify does): one write, where a
// response begun by writeHead without it is chunked (three more pieces in a writev).
const answer = (res: http.ServerResponse, id: string) => {
  const body = JSON.stringify({ id, status: 'processed' });
  res.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
};

async function ourOptions(kind: Kind): Promise<ReceiverOptions> {
  const options: ReceiverOptions = {
    bearerTokens: [TOKEN],
    router: createEventRouter().on('ag.*', () => undefined),
    logger: false,
  };
  if (kind !== 'ours: Express + RedisStore') return options;
  const { RedisStore } = (await import('../lib/redis/index.js')) as typeof import('../lib/redis');
  const { createClient } = await import('redis');
  const client = createClient({ url: process.env.BENCH_REDIS_URL, disableOfflineQueue: true });
  await client.connect();
  return {
    ...options,
    idempotency: new RedisStore({ sendCommand: (...args: string[]) => client.sendCommand(args) }),
  };
}

async function listener(kind: Kind): Promise<http.RequestListener> {
  switch (kind) {
    case 'node:http + JSON.parse':
      return (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () =>
          answer(res, (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id),
        );
      };
    case 'express.json() route': {
      const app = express();
      app.post(
        '/hook',
        express.json({ type: () => true }),
        (req, res) => void res.json({ id: (req.body as { id: string }).id, status: 'processed' }),
      );
      return app;
    }
    case 'octokit createNodeMiddleware': {
      const { Webhooks, createNodeMiddleware } = await import('@octokit/webhooks');
      const webhooks = new Webhooks({ secret: OCTOKIT_SECRET });
      webhooks.onAny(() => undefined);
      return createNodeMiddleware(webhooks, { path: '/hook' }) as http.RequestListener;
    }
    case 'ours: Express':
    case 'ours: Express + RedisStore': {
      const app = express();
      app.use('/hook', webhookReceiver(await ourOptions(kind)));
      return app;
    }
    // Fastify's own request listener (fastify.routing, public), so both run in the same server.
    case 'Fastify JSON route': {
      const app = Fastify();
      app.addContentTypeParser(
        'application/cloudevents+json',
        { parseAs: 'string' },
        app.getDefaultJsonParser('error', 'error'),
      );
      app.post('/hook', async (request) => ({
        id: (request.body as { id: string }).id,
        status: 'processed',
      }));
      await app.ready();
      return (req, res) => app.routing(req, res);
    }
    case 'ours: Fastify plugin': {
      const app = Fastify();
      await app.register(serviceWebhooks, { ...(await ourOptions(kind)), prefix: '/hook' });
      await app.ready();
      return (req, res) => app.routing(req, res);
    }
    case 'Fastify contract floor':
      return fastifyContractFloor();
    case 'ours: createNodeHandler': {
      const handler = createNodeHandler({ ...(await ourOptions(kind)), path: '/hook' });
      return (req, res) => void handler(req, res);
    }
  }
}

/**
 * Serves `inner` on a free port: reports the port, then its CPU time and request count between the
 * parent's 'start' and 'stop' messages; 'exit' closes it (and `close`, what it holds).
 */
export async function serveMeasured(
  inner: http.RequestListener,
  close: () => Promise<void> = async () => undefined,
): Promise<void> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    inner(req, res);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let cpu = process.cpuUsage();
  let counted = 0;
  process.on('message', (message: string) => {
    if (message === 'start') {
      cpu = process.cpuUsage();
      counted = requests;
    } else if (message === 'stop') {
      const used = process.cpuUsage(cpu);
      process.send?.({
        cpuMicros: used.user + used.system,
        userMicros: used.user,
        requests: requests - counted,
      });
    } else if (message === 'exit') {
      server.closeAllConnections();
      server.close(() => void close().finally(() => process.exit(0)));
    }
  });
  const { port } = server.address() as AddressInfo;
  // Without a parent's channel (under valgrind, say: bench/instructions.ts), the port goes to stdout.
  if (process.send === undefined) console.log(JSON.stringify({ port }));
  else process.send({ port });
}

if (require.main === module) void listener(process.argv[2] as Kind).then((inner) => serveMeasured(inner));
