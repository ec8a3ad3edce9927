// npm run bench (or node .bench-build/bench/burst-bench.js): the receiver under a 10× burst, with and
// without maxInFlight. The receiver (createNodeHandler, a handler that waits 20 ms: a database write)
// runs in a process of its own, so its peak RSS is its alone; the load comes from this one. A warm-up
// at the usual 32 clients, then 320 for the burst, each sending its next delivery once the last was
// answered (a shed one waits a second first): p99 of the admitted (200) requests, how many were shed
// (503), and the server's peak RSS. Figures, no goal.
import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEventRouter, createNodeHandler } from '../lib';
import { eventBody, TOKEN } from './bench-events';

const SECONDS = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 5;
const CONNECTIONS = 32;
const BURST = 10 * CONNECTIONS;
const HANDLER_MS = 20;
const MAX_IN_FLIGHT = CONNECTIONS;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface BurstBenchRow {
  receiver: string;
  'admitted/s': number;
  'admitted p50 ms': number;
  'admitted p99 ms': number;
  shed: number;
  other: number;
  'peak RSS MB': number;
}

/** The server process: `burst-bench.js --serve <maxInFlight|0>`; it reports its port, then its peak RSS. */
async function serve(maxInFlight: number): Promise<void> {
  const router = createEventRouter().on('ag.*', () => sleep(HANDLER_MS));
  const handler = createNodeHandler({
    bearerTokens: [TOKEN],
    router,
    logger: false,
    ...(maxInFlight > 0 ? { maxInFlight } : {}),
  });
  const server = http.createServer((req, res) => void handler(req, res));
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.on('message', (message: string) => {
    // maxRSS is the process's peak, in KiB.
    if (message === 'stop') process.send?.({ peakRssMb: process.resourceUsage().maxRSS / 1024 });
    if (message === 'exit') {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    }
  });
  process.send?.({ port: (server.address() as AddressInfo).port });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

let sequence = 0;

/** How long a shed client waits before its next request: the Service's Retry-After, shortened. */
const SHED_WAIT_MS = 1000;

/** One POST on `agent`; resolves its status once the answer is read (0 when the connection failed). */
function post(url: URL, agent: http.Agent): Promise<number> {
  const body = eventBody(sequence++, 'burst');
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/cloudevents+json; charset=utf-8',
          authorization: `Bearer ${TOKEN}`,
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

/**
 * `clients` senders for `seconds`, each on its own kept-alive connection, as the Service's deliveries
 * arrive: the next request once the last is answered, and after a 503 only once its wait is over (a
 * client that came straight back would measure the retries, not the burst).
 */
async function load(url: string, clients: number, seconds: number) {
  const admitted: number[] = [];
  const counts = { shed: 0, other: 0 };
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const target = new URL(url);
  const until = performance.now() + seconds * 1000;
  const client = async () => {
    while (performance.now() < until) {
      const started = performance.now();
      const status = await post(target, agent);
      if (status === 200) admitted.push(performance.now() - started);
      else if (status === 503) {
        counts.shed++;
        await sleep(SHED_WAIT_MS);
      } else counts.other++;
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  agent.destroy();
  return { admitted, ...counts };
}

async function measure(maxInFlight: number): Promise<BurstBenchRow> {
  const child = fork(__filename, ['--serve', String(maxInFlight)], { stdio: 'inherit' });
  const next = <T>(key: string) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('the burst server did not answer within 30 s')),
        30_000,
      );
      const on = (m: Record<string, unknown>) => {
        if (!(key in m)) return;
        clearTimeout(timer);
        child.off('message', on);
        resolve(m as T);
      };
      child.on('message', on);
    });
  try {
    const { port } = await next<{ port: number }>('port');
    const url = `http://127.0.0.1:${port}/`;
    await load(url, CONNECTIONS, 1);
    const burst = await load(url, BURST, SECONDS);
    child.send('stop');
    const { peakRssMb } = await next<{ peakRssMb: number }>('peakRssMb');
    const sorted = burst.admitted.sort((a, b) => a - b);
    return {
      receiver: maxInFlight > 0 ? `maxInFlight: ${maxInFlight}` : 'no maxInFlight',
      'admitted/s': Math.round(sorted.length / SECONDS),
      'admitted p50 ms': Math.round(percentile(sorted, 50)),
      'admitted p99 ms': Math.round(percentile(sorted, 99)),
      shed: burst.shed,
      other: burst.other,
      'peak RSS MB': Math.round(peakRssMb),
    };
  } finally {
    child.send('exit');
    await new Promise((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.once('exit', () => resolve(clearTimeout(timer)));
    });
  }
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--serve');
  if (at !== -1) return serve(Number(process.argv[at + 1]));
  const rows = [await measure(0), await measure(MAX_IN_FLIGHT)];
  if (process.argv.includes('--json')) return void process.stdout.write(JSON.stringify(rows));
  console.log(
    `a burst of ${BURST} clients (10× ${CONNECTIONS}) for ${SECONDS} s, a ${HANDLER_MS} ms handler:`,
  );
  console.table(rows);
}

if (require.main === module) void main();
