// npm run bench (or node .bench-build/bench/inbox-bench.js): sync mode against the durable inbox on
// each engine, with a handler that waits 20 ms (a database write, an API call). Acknowledgement
// latency and events/s accepted come from autocannon; events/s processed from the workers, until the
// queue is drained. One process: receiver, workers and load share this machine's cores.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import autocannon from 'autocannon';
import { startPostgresServer } from '../__tests__/support/postgres-server';
import { startRedisServer } from '../__tests__/support/redis-server';
import { createEventRouter, createNodeHandler, type Inbox } from '../lib';
import { bullmqInbox } from '../lib/bullmq';
import { pgBossInbox } from '../lib/pg-boss';
import { eventBody, TOKEN } from './bench-events';

const SECONDS = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 5;
const CONNECTIONS = 32;
const HANDLER_MS = 20;
const WORKER_CONCURRENCY = 16;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface InboxBenchRow {
  mode: string;
  'ack p50 ms': number;
  'ack p99 ms': number;
  'accepted/s': number;
  'processed/s': number;
  non200: number;
}

let sequence = 0;

async function measure(mode: string, inbox: Inbox | undefined): Promise<InboxBenchRow> {
  let processed = 0;
  let lastProcessedAt = 0;
  const router = createEventRouter().on('ag.*', async () => {
    await sleep(HANDLER_MS);
    processed++;
    lastProcessedAt = performance.now();
  });
  const handler = createNodeHandler({
    bearerTokens: [TOKEN],
    router: inbox === undefined ? router : createEventRouter(),
    logger: false,
    ...(inbox === undefined ? {} : { inbox }),
  });
  const server = http.createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const worker = await inbox?.startWorker(router, { concurrency: WORKER_CONCURRENCY, logger: false });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const prefix = mode.replace(/\W/g, '');
  const started = performance.now();
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => ({
          ...request,
          body: eventBody(sequence++, prefix),
          headers: {
            'content-type': 'application/cloudevents+json; charset=utf-8',
            authorization: `Bearer ${TOKEN}`,
          },
        }),
      },
    ],
  });
  const accepted = result['2xx'];
  // Drained: every accepted event processed, or 120 s at most.
  const deadline = Date.now() + 120_000;
  while (processed < accepted && Date.now() < deadline) await sleep(20);
  await worker?.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  return {
    mode,
    'ack p50 ms': result.latency.p50,
    'ack p99 ms': result.latency.p99,
    'accepted/s': Math.round(accepted / SECONDS),
    'processed/s': Math.round(processed / ((lastProcessedAt - started) / 1000)),
    non200: result.non2xx,
  };
}

export async function inboxBench(): Promise<InboxBenchRow[]> {
  const rows = [await measure('sync (handler in the request)', undefined)];
  const redis = await startRedisServer({ persistent: true });
  try {
    const inbox = bullmqInbox({ connection: redis.url, name: 'bench', logger: false });
    rows.push(await measure('inbox: BullMQ (Redis, appendfsync always)', inbox));
    await inbox.close();
  } finally {
    await redis.close();
  }
  const postgres = await startPostgresServer();
  try {
    const inbox = pgBossInbox({ connectionString: postgres.url, name: 'bench' });
    rows.push(await measure('inbox: pg-boss (PostgreSQL, fsync off)', inbox));
    await inbox.close();
  } finally {
    await postgres.close();
  }
  return rows;
}

if (require.main === module) {
  void inboxBench().then((rows) => {
    if (process.argv.includes('--json')) return console.log(JSON.stringify(rows));
    console.log(
      `${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}; ${SECONDS} s, ${CONNECTIONS} connections, a ${HANDLER_MS} ms handler, ${WORKER_CONCURRENCY} jobs at once per worker:`,
    );
    console.table(rows);
  });
}
