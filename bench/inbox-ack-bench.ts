// The inbox's acknowledgement against the bare engine (issue 36): a node:http server that parses the
// body and does `queue.add` / `boss.send` on the same Redis / PostgreSQL, no worker on either side.
// Each server runs in a process of its own pinned to one core (the load generator on the other), in
// rounds that alternate their order, so both sides of a ratio see the same load on a shared machine.
//   node .bench-build/bench/inbox-ack-bench.js [--rounds 7] [--seconds 3] [--only BullMQ|pg-boss] [--json]
//   node .bench-build/bench/inbox-ack-bench.js --split [--rounds 3] [--seconds 3]   where BullMQ's CPU goes
// Run by `npm run bench`, whose goal table holds its rows. The Redis keeps no append-only file and the
// PostgreSQL does not fsync: the engines' own disk waits are left out, so what is measured is what the
// receiver adds to the engine's own round trip.
import { fork } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import autocannon from 'autocannon';
import { startPostgresServer } from '../__tests__/support/postgres-server';
import { startRedisServer } from '../__tests__/support/redis-server';
import { createEventRouter, createNodeHandler } from '../lib';
import { bullmqInbox } from '../lib/bullmq';
import { pgBossInbox } from '../lib/pg-boss';
import { loadPgBoss } from '../lib/pg-boss/load-pg-boss';
import { contractFloor } from './ack-contract-floor';
import { eventBody, TOKEN } from './bench-events';
import { serveMeasured } from './bench-server';
import { pin, pinLoadGenerator, WARM_UP_REQUESTS } from './load-round';
import { median } from './median';

export const ACK_KINDS = [
  'bare: node:http + JSON.parse + queue.add',
  'ours: inbox on BullMQ',
  'bare: node:http + JSON.parse + boss.send',
  'ours: inbox on pg-boss',
] as const;
/**
 * `--split`: the BullMQ pair and three servers between them, each in a process of its own in the same
 * rounds, so the inbox's CPU a request splits into the door and pipeline (the enqueue answered at
 * once), the engine's add of our delivery, and the inbox's job options with its job id.
 */
export const SPLIT_KINDS = [
  'split: node:http + JSON.parse, no add',
  'split: our door, the inbox answering at once',
  'split: our door, our delivery by a bare queue.add',
] as const;
/**
 * What the contract costs on BullMQ by hand (bench/ack-contract-floor.ts), in the BullMQ rounds beside
 * the pair: a figure, no goal, that says how near the bare row any receiver keeping the contract can be.
 */
export const FLOOR_KIND = 'floor: the contract by hand + queue.add';
type AckKind = (typeof ACK_KINDS)[number] | (typeof SPLIT_KINDS)[number] | typeof FLOOR_KIND;

const CONNECTIONS = 32;
const SERVER_CPU = 1;

/** The request listener of `kind`, on the engine at `url`, and how to close it. */
async function listener(
  kind: AckKind,
  url: string,
): Promise<{ listen: http.RequestListener; close(): Promise<void> }> {
  if (kind === FLOOR_KIND) return contractFloor(url);
  if (kind === SPLIT_KINDS[0])
    return {
      listen: (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string };
          res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
          res.end(JSON.stringify({ id: event.id, status: 'queued' }));
        });
      },
      close: async () => undefined,
    };
  if (kind.startsWith('bare')) {
    let enqueue: (event: { id: string; type: string }) => Promise<unknown>;
    let close: () => Promise<void>;
    if (kind.includes('queue.add')) {
      const { Queue } = await import('bullmq');
      const { hostname, port } = new URL(url);
      const queue = new Queue('bare', { connection: { host: hostname, port: Number(port) } });
      // The event id as the job id: a redelivery adds nothing, as a webhook queue must.
      enqueue = (event) => queue.add(event.type, event, { jobId: event.id });
      close = () => queue.close();
    } else {
      const boss = new (loadPgBoss().PgBoss)({ connectionString: url });
      await boss.start();
      if ((await boss.getQueue('bare')) === null) await boss.createQueue('bare');
      enqueue = (event) => boss.send('bare', event);
      close = () => boss.stop({ graceful: false, timeout: 5000 });
    }
    return {
      listen: (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; type: string };
          enqueue(event).then(
            () => {
              res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
              res.end(JSON.stringify({ id: event.id, status: 'queued' }));
            },
            () => {
              res.writeHead(503);
              res.end();
            },
          );
        });
      },
      close,
    };
  }
  const inbox = kind.includes('pg-boss')
    ? pgBossInbox({ connectionString: url, name: 'ours', logger: false })
    : bullmqInbox({ connection: url, name: 'ours', logger: false });
  let enqueue = inbox.enqueue;
  let closeBare: () => Promise<unknown> = async () => undefined;
  if (kind === SPLIT_KINDS[1]) enqueue = async () => undefined;
  if (kind === SPLIT_KINDS[2]) {
    // Our delivery as the inbox queues it, with a job id and none of the inbox's job options.
    const { Queue } = await import('bullmq');
    const { hostname, port } = new URL(url);
    const queue = new Queue('bare', { connection: { host: hostname, port: Number(port) } });
    enqueue = async (delivery) => void (await queue.add(delivery.type, delivery, { jobId: delivery.id }));
    closeBare = () => queue.close();
  }
  const handler = createNodeHandler({
    bearerTokens: [TOKEN],
    router: createEventRouter(),
    logger: false,
    inbox: enqueue === inbox.enqueue ? inbox : { ...inbox, enqueue },
  });
  return {
    listen: (req, res) => void handler(req, res),
    close: () => Promise.all([inbox.close(), closeBare()]).then(() => undefined),
  };
}

function message<T>(child: ReturnType<typeof fork>, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${key} message did not come within 60 s`)), 60_000);
    const on = (m: unknown) => {
      if (typeof m !== 'object' || m === null || !(key in m)) return;
      clearTimeout(timer);
      child.off('message', on);
      resolve(m as T);
    };
    child.on('message', on);
  });
}

let sequence = 0;

/**
 * The load; with `latencies`, each 2xx answer's latency in milliseconds is pushed there as measured.
 * autocannon's own percentiles are whole milliseconds (its histogram's unit): at a p99 near 10 ms a
 * ratio would move in steps of 0.1, half the margin of its goal.
 */
function load(
  url: string,
  length: { duration: number } | { amount: number },
  latencies?: number[],
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: CONNECTIONS,
        ...length,
        requests: [
          {
            method: 'POST',
            // A new event id on every request: every one is a new job.
            setupRequest: (request) => ({
              ...request,
              body: eventBody(sequence++, 'k'),
              headers: {
                'content-type': 'application/cloudevents+json; charset=utf-8',
                authorization: `Bearer ${TOKEN}`,
              },
            }),
          },
        ],
      },
      (error: unknown, result) => (error ? reject(error as Error) : resolve(result)),
    );
    if (latencies !== undefined)
      instance.on('response', (_client, status, _bytes, ms) => {
        if (status >= 200 && status < 300) latencies.push(ms);
      });
  });
}

/** The nearest-rank percentile `p` (0–100) of `values`. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

export interface AckRound {
  kind: AckKind;
  reqPerSec: number;
  p99Ms: number;
  non2xx: number;
  cpuMicrosPerRequest: number;
}

async function round(kind: AckKind, url: string, seconds: number): Promise<AckRound> {
  // The child's stdout goes to stderr: with --json, this process's stdout is the parent's JSON.
  const child = fork(__filename, ['--serve', kind, url], { stdio: ['ignore', 2, 2, 'ipc'] });
  pin(child.pid, SERVER_CPU);
  try {
    const { port } = await message<{ port: number }>(child, 'port');
    const target = `http://127.0.0.1:${port}/`;
    await load(target, { amount: WARM_UP_REQUESTS });
    child.send('start');
    const latencies: number[] = [];
    const result = await load(target, { duration: seconds }, latencies);
    child.send('stop');
    const cpu = await message<{ cpuMicros: number; requests: number }>(child, 'cpuMicros');
    return {
      kind,
      reqPerSec: result.requests.average,
      p99Ms: percentile(latencies, 99),
      non2xx: result.non2xx + result.errors + result.timeouts,
      cpuMicrosPerRequest: cpu.cpuMicros / Math.max(1, cpu.requests),
    };
  } finally {
    child.send('exit');
    await new Promise((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => resolve(clearTimeout(timer)));
    });
  }
}

type Engine = 'BullMQ' | 'pg-boss';
/** Each engine's bare server and ours, in that order. */
const PAIRS = {
  BullMQ: [ACK_KINDS[0], ACK_KINDS[1]],
  'pg-boss': [ACK_KINDS[2], ACK_KINDS[3]],
} as const;

export interface AckBench {
  rows: { kind: AckKind; 'req/s': number; 'p99 ms': number; non2xx: number; 'CPU µs/req': number }[];
  /**
   * Per engine: each round's ours/bare, req/s and p99 (goals), and the bare's CPU per request over
   * ours; on BullMQ also the contract floor's req/s over the bare's and ours over the floor's.
   */
  ratios: {
    engine: Engine;
    throughput: number[];
    p99: number[];
    cpu: number[];
    floorOverBare?: number[];
    oursOverFloor?: number[];
  }[];
}

/** Both engines, or only `only`'s (a quick A/B of one side's change). */
export async function inboxAckBench(rounds: number, seconds: number, only?: Engine): Promise<AckBench> {
  pinLoadGenerator();
  const engines = (['BullMQ', 'pg-boss'] as const).filter((e) => only === undefined || e === only);
  const kindsOf = (engine: Engine): AckKind[] =>
    engine === 'BullMQ' ? [PAIRS[engine][0], FLOOR_KIND, PAIRS[engine][1]] : [...PAIRS[engine]];
  const results = new Map<AckKind, AckRound[]>(engines.flatMap((e) => kindsOf(e).map((k) => [k, []])));
  const ratios: AckBench['ratios'] = engines.map((engine) => ({
    engine,
    throughput: [],
    p99: [],
    cpu: [],
    ...(engine === 'BullMQ' ? { floorOverBare: [], oursOverFloor: [] } : {}),
  }));
  const redis = engines.includes('BullMQ') ? await startRedisServer() : undefined;
  const postgres = engines.includes('pg-boss') ? await startPostgresServer() : undefined;
  try {
    for (let r = 0; r < rounds; r++) {
      for (const [at, engine] of engines.entries()) {
        const pair = PAIRS[engine];
        // Alternate which side goes first, so neither always meets a warmer engine.
        const order = r % 2 === 0 ? kindsOf(engine) : kindsOf(engine).reverse();
        const got = new Map<AckKind, AckRound>();
        for (const kind of order) {
          const measured = await round(
            kind,
            (engine === 'BullMQ' ? redis?.url : postgres?.url) as string,
            seconds,
          );
          got.set(kind, measured);
          results.get(kind)?.push(measured);
        }
        const bare = got.get(pair[0]) as AckRound;
        const ours = got.get(pair[1]) as AckRound;
        ratios[at]?.throughput.push(ours.reqPerSec / bare.reqPerSec);
        ratios[at]?.p99.push(ours.p99Ms / bare.p99Ms);
        ratios[at]?.cpu.push(bare.cpuMicrosPerRequest / ours.cpuMicrosPerRequest);
        const floor = got.get(FLOOR_KIND);
        if (floor !== undefined) {
          ratios[at]?.floorOverBare?.push(floor.reqPerSec / bare.reqPerSec);
          ratios[at]?.oursOverFloor?.push(ours.reqPerSec / floor.reqPerSec);
        }
      }
      console.error(`inbox ack: round ${r + 1}/${rounds} done`);
    }
  } finally {
    await Promise.allSettled([redis?.close(), postgres?.close()]);
  }
  const rows = [...results].map(([kind, list]) => ({
    kind,
    'req/s': Math.round(median(list.map((x) => x.reqPerSec))),
    'p99 ms': Number(median(list.map((x) => x.p99Ms)).toFixed(2)),
    non2xx: list.reduce((s, x) => s + x.non2xx, 0),
    'CPU µs/req': Math.round(median(list.map((x) => x.cpuMicrosPerRequest))),
  }));
  return { rows, ratios };
}

/**
 * The BullMQ pair and the three split servers in alternating rounds: the median CPU µs a request of
 * each, and the differences that say where the inbox's CPU goes.
 */
export async function splitBench(rounds: number, seconds: number): Promise<Record<string, number>> {
  pinLoadGenerator();
  const kinds = [SPLIT_KINDS[0], ACK_KINDS[0], SPLIT_KINDS[1], SPLIT_KINDS[2], ACK_KINDS[1]];
  const cpu = new Map<AckKind, number[]>(kinds.map((k) => [k, []]));
  const redis = await startRedisServer();
  try {
    for (let r = 0; r < rounds; r++) {
      for (const kind of r % 2 === 0 ? kinds : [...kinds].reverse())
        cpu.get(kind)?.push((await round(kind, redis.url, seconds)).cpuMicrosPerRequest);
      console.error(`inbox ack split: round ${r + 1}/${rounds} done`);
    }
  } finally {
    await redis.close();
  }
  const at = (kind: AckKind) => median(cpu.get(kind) ?? []);
  return {
    ...Object.fromEntries(kinds.map((k) => [k, Math.round(at(k))])),
    'the add, in the bare server': Math.round(at(ACK_KINDS[0]) - at(SPLIT_KINDS[0])),
    'the door, no add': Math.round(at(SPLIT_KINDS[1]) - at(SPLIT_KINDS[0])),
    'the add of our delivery, in our door': Math.round(at(SPLIT_KINDS[2]) - at(SPLIT_KINDS[1])),
    "the inbox's job options and job id": Math.round(at(ACK_KINDS[1]) - at(SPLIT_KINDS[2])),
  };
}

/** The floor's rows, figures with no goal: [name, min, median]. */
export function floorRows(bench: AckBench): [string, number, number][] {
  return bench.ratios.flatMap(({ engine, floorOverBare, oursOverFloor }) =>
    floorOverBare === undefined || oursOverFloor === undefined || floorOverBare.length === 0
      ? []
      : [
          [`contract floor / bare ${engine} add, req/s`, Math.min(...floorOverBare), median(floorOverBare)],
          [`inbox ack / contract floor, req/s`, Math.min(...oursOverFloor), median(oursOverFloor)],
        ],
  );
}

/** The goal rows of `npm run bench`: [name, min, median, goal, higher is better]. */
export function ackGoals(bench: AckBench): [string, number, number, number, boolean][] {
  return bench.ratios.flatMap(({ engine, throughput, p99 }) => [
    [`inbox ack / bare ${engine} add, req/s`, Math.min(...throughput), median(throughput), 0.9, true],
    [`inbox ack / bare ${engine} add, p99`, Math.max(...p99), median(p99), 1.2, false],
  ]);
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const flag = (name: string, fallback: number) =>
    args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback;
  if (args[0] === '--serve')
    void listener(args[1] as AckKind, args[2] as string).then(({ listen, close }) =>
      serveMeasured(listen, close),
    );
  else if (args.includes('--split'))
    void splitBench(flag('--rounds', 3), flag('--seconds', 3)).then((split) => {
      console.log(`CPU µs a request, medians; load ${os.loadavg()[0]?.toFixed(1)}:`);
      console.table(split);
    });
  else
    void inboxAckBench(
      flag('--rounds', 7),
      flag('--seconds', 3),
      args.includes('--only') ? (args[args.indexOf('--only') + 1] as Engine) : undefined,
    ).then((bench) => {
      if (args.includes('--json')) return console.log(JSON.stringify(bench));
      console.log(
        `${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}, load ${os.loadavg()[0]?.toFixed(1)}; ${CONNECTIONS} connections, no worker:`,
      );
      console.table(bench.rows);
      for (const [name, worst, med, goal, higher] of ackGoals(bench))
        console.log(
          `${name.padEnd(40)} worst ${worst.toFixed(2)}  median ${med.toFixed(2)}  ${higher ? '≥' : '≤'} ${goal}  ${(higher ? med >= goal : med <= goal) ? 'met' : 'NOT met'}`,
        );
      for (const [name, worst, med] of floorRows(bench))
        console.log(`${name.padEnd(40)} worst ${worst.toFixed(2)}  median ${med.toFixed(2)}  (no goal)`);
      // Steadier than req/s on a shared machine: the server's CPU per request, bare over ours.
      for (const { engine, cpu } of bench.ratios)
        console.log(
          `${`bare ${engine} add / inbox ack, CPU per request`.padEnd(40)} worst ${Math.min(...cpu).toFixed(2)}  median ${median(cpu).toFixed(2)}`,
        );
    });
}
