// npm run bench: the receiver's whole pipeline against a bare Express JSON route, over loopback.
// Speed goals live here, never in a timed unit test.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createEventRouter, webhookReceiver } from '../lib';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const CONCURRENCY = 32;
/** The goal: the receiver keeps at least this share of a bare JSON route's throughput. */
const GOAL = 0.6;
const TOKEN = 'tok_bench';

async function serve(app: express.Express): Promise<{ port: number; close: () => void }> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

async function load(port: number, path: string, bodies: string[]): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let next = 0;
  const one = (body: string) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          agent,
          headers: {
            ...DELIVERY_HEADERS,
            Authorization: `Bearer ${TOKEN}`,
            'Content-Length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < bodies.length; i = next++) await one(bodies[i] as string);
    }),
  );
  agent.destroy();
  return bodies.length / (Number(process.hrtime.bigint() - started) / 1e9);
}

async function main(): Promise<void> {
  // Distinct events, so the idempotency store does real work on every request.
  const bodies = Array.from({ length: REQUESTS }, (_, i) =>
    JSON.stringify(
      buildEvent(
        i % 2 ? 'ag.access_pass.issued' : 'ag.access_pass.devices.added',
        {},
        { layout: i % 3 ? 'A' : 'B' },
      ),
    ),
  );
  const bare = express();
  bare.post(
    '/hook',
    express.json({ type: () => true }),
    (req, res) => void res.json({ id: (req.body as { id: string }).id }),
  );
  const full = express();
  full.use(
    '/hook',
    webhookReceiver({
      bearerTokens: [TOKEN],
      router: createEventRouter().onAny(() => undefined),
      logger: false,
    }),
  );

  const results: Record<string, number> = {};
  for (const [name, app] of [
    ['bare express.json route', bare],
    ['webhookReceiver', full],
  ] as const) {
    const server = await serve(app);
    await load(server.port, '/hook', bodies.slice(0, 2000)); // warm-up
    results[name] = await load(server.port, '/hook', bodies);
    server.close();
  }
  const ratio = (results.webhookReceiver ?? 0) / (results['bare express.json route'] ?? 1);
  for (const [name, rate] of Object.entries(results))
    console.log(`${name.padEnd(24)} ${rate.toFixed(0).padStart(7)} req/s`);
  console.log(`receiver / bare = ${ratio.toFixed(2)} (goal ≥ ${GOAL}) ${ratio >= GOAL ? 'met' : 'NOT met'}`);
  process.exitCode = ratio >= GOAL ? 0 : 1;
}

void main();
