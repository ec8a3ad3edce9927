// npm run bench: every receiver in its own process under autocannon, several alternating rounds,
// ratios from the same run (this machine is noisy). Speed goals live here, never in a timed test.
//   npm run bench -- --stages        µs per pipeline stage, in process
//   npm run bench -- --cold-start    import time of the main entry against @octokit/webhooks
//   npm run bench -- --instructions  instructions per request under callgrind, each door vs its peer (--only too)
//   npm run bench -- --rounds 5 --seconds 5
//   node .bench-build/bench/inbox-bench.js   sync vs the durable inbox only (after npm run bench built it)
//   node .bench-build/bench/inbox-ack-bench.js   the inbox's acknowledgement vs a bare queue.add / boss.send only
//   node .bench-build/bench/burst-bench.js   the 10× burst, with and without maxInFlight, only
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../__tests__/support/server-binary';
import { KINDS, type Kind } from './bench-server';
import { coldStart } from './cold-start';
import { ackGoals, floorRows, type AckBench } from './inbox-ack-bench';
import { CONTRACT_FLOORS, INSTRUCTION_FLOOR, INSTRUCTION_PAIRS, instructionCounts } from './instructions';
import { loadRound, pinLoadGenerator, type LoadResult } from './load-round';
import { stageMicros } from './stages';
import { median } from './median';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : Number(args[at + 1]);
};
const fmt = (n: number, digits = 0) => n.toFixed(digits);

/** A throwaway redis-server for the RedisStore row, or undefined when none is installed. */
async function startRedis(): Promise<{ url: string; stop(): void } | undefined> {
  if (spawnSync('redis-server', ['--version']).status !== 0) return undefined;
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 50; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(!!socket.end()));
      socket.on('error', () => resolve(false));
    });
    if (up) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () => (child.kill(), rmSync(dir, { recursive: true, force: true })),
  };
}

type StoreRow = Record<string, number | string>;

/** An in-process row of bench/in-process-row.ts, in a fresh process. */
const inProcess = <T>(row: 'pipeline' | 'memory'): T =>
  JSON.parse(
    execFileSync(process.execPath, ['--expose-gc', path.join(__dirname, 'in-process-row.js'), row], {
      encoding: 'utf8',
    }),
  ) as T;

/** bench/store-bench.ts's rows for `only` (its `--only` list), in a fresh process. */
const storeBench = (only: string): StoreRow[] =>
  JSON.parse(
    execFileSync(
      process.execPath,
      ['--expose-gc', path.join(__dirname, 'store-bench.js'), '--json', '--only', only],
      { encoding: 'utf8', maxBuffer: 1 << 20 },
    ),
  ) as StoreRow[];

/**
 * One row per store: each time the least of that store's runs, every other number their median. An
 * in-process time has no pair to cancel the host's slow spells against, and a spell can only add to it:
 * the least of rounds spread over the whole run is the code's own cost, as Python's `timeit` reads its
 * repeats ("higher values … are typically not caused by variability in Python's speed, but by other
 * processes interfering"). A bytes figure is not slowed by a spell, so it keeps the median.
 */
function bestRows(runs: StoreRow[][]): StoreRow[] {
  const byStore = new Map<string, StoreRow[]>();
  for (const row of runs.flat())
    byStore.set(String(row.store), [...(byStore.get(String(row.store)) ?? []), row]);
  return [...byStore].map(([store, list]) => {
    const row: StoreRow = { store };
    for (const [field, value] of Object.entries(list[0] ?? {})) {
      if (typeof value !== 'number') row[field] = value;
      else {
        const values = list.map((r) => Number(r[field]));
        row[field] = field.includes('µs') ? Math.min(...values) : median(values);
      }
    }
    return row;
  });
}

async function stages(): Promise<void> {
  console.log('µs per event, in process (no HTTP), one access-pass device event of ~1.5 KB:');
  for (const [stage, micros] of Object.entries(await stageMicros()))
    console.log(`  ${stage.padEnd(32)} ${fmt(micros, 2).padStart(7)}`);
}

async function instructionsReport(): Promise<void> {
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  const counts = await instructionCounts(only);
  if (counts === undefined) return void console.log('instructions: valgrind is not installed');
  const k = (kind: Kind) => counts.get(kind)?.total ?? NaN;
  /** Without V8's collections and late compilation: what the request's own code ran. */
  const own = (kind: Kind) => {
    const count = counts.get(kind);
    return count === undefined ? NaN : count.total - count.gc - count.compile;
  };
  const parts = (kind: Kind) =>
    `GC ${fmt((counts.get(kind)?.gc ?? NaN) / 1000)}k, compile ${fmt((counts.get(kind)?.compile ?? NaN) / 1000)}k`;
  const floor = k(INSTRUCTION_FLOOR);
  console.log('user-space instructions per request (callgrind, after a warm-up):');
  console.log(
    `  ${INSTRUCTION_FLOOR.padEnd(30)} ${fmt(floor / 1000).padStart(5)}k (${parts(INSTRUCTION_FLOOR)})`,
  );
  for (const [ours, peer] of INSTRUCTION_PAIRS) {
    if (!counts.has(ours)) continue;
    console.log(
      `  ${ours.padEnd(30)} ${fmt(k(ours) / 1000).padStart(5)}k (${fmt((k(ours) - floor) / 1000)}k over the floor; ${parts(ours)}) vs ${peer} ${fmt(k(peer) / 1000)}k (${parts(peer)}): ${fmt(k(ours) / k(peer), 3)}×, ${fmt(own(ours) / own(peer), 3)}× without GC and compilation`,
    );
    const contract = CONTRACT_FLOORS[ours];
    if (contract !== undefined && counts.has(contract))
      console.log(
        `    ${contract.padEnd(28)} ${fmt(k(contract) / 1000).padStart(5)}k (${parts(contract)}): ${fmt(k(contract) / k(peer), 3)}× ${peer}, ${fmt(own(contract) / own(peer), 3)}× without GC and compilation; ours ${fmt(k(ours) / k(contract), 3)}× it`,
      );
  }
}

function coldStartReport(): boolean {
  const { oursMs, octokitMs, oursCpuMs, octokitCpuMs, modules } = coldStart();
  const ratio = oursMs / octokitMs;
  console.log(
    `cold start: import() ${fmt(oursMs, 1)} ms vs @octokit/webhooks ${fmt(octokitMs, 1)} ms = ${fmt(ratio, 2)}× (goal ≤ 1.5) ${ratio <= 1.5 ? 'met' : 'NOT met'}; CPU ${fmt(oursCpuMs, 1)} vs ${fmt(octokitCpuMs, 1)} ms = ${fmt(oursCpuMs / octokitCpuMs, 2)}×; ${modules} modules (goal ≤ 60) ${modules <= 60 ? 'met' : 'NOT met'}`,
  );
  return ratio <= 1.5 && modules <= 60;
}

async function main(): Promise<void> {
  if (args.includes('--stages')) return stages();
  if (args.includes('--cold-start')) return void coldStartReport();
  if (args.includes('--instructions')) return instructionsReport();
  // Many short alternating rounds: a ratio is the median of pairs measured seconds apart, so a burst
  // of other work on the machine moves one pair, not the verdict.
  const rounds = flag('--rounds', 7);
  const seconds = flag('--seconds', 3);
  pinLoadGenerator();
  const redis = await startRedis();
  // --only <text>: just the receivers whose name contains it (e.g. --only node), for a quick A/B.
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  const kinds: Kind[] = KINDS.filter(
    (k) =>
      (redis !== undefined || k !== 'ours: Express + RedisStore') &&
      (only === undefined ||
        k.includes(only) ||
        k.includes('octokit') ||
        k.includes('express.json') ||
        k === 'Fastify JSON route'),
  );
  const results = new Map<Kind, LoadResult[]>(kinds.map((k) => [k, []]));
  const ratios = {
    express: [] as number[],
    node: [] as number[],
    fastify: [] as number[],
    floorOverRoute: [] as number[],
    pluginOverFloor: [] as number[],
  };
  // The in-process rows, sampled once a round between the load rounds, each in a fresh process: this
  // host has slow spells of a minute or more (the same build's pipeline 10.6 µs, then 13.5–15.6 a
  // minute later), and three samples taken back to back at the end all fell in one (14.4–15.6 µs,
  // the bare Map floor 2.45 against 1.7–2.0). Spread over the run, a spell moves a sample, not the verdict.
  const pipelines: number[] = [];
  const memoryRuns: StoreRow[][] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      // Alternate the order, so no receiver always runs first (or last) on a warming machine.
      const order = round % 2 === 0 ? kinds : [...kinds].reverse();
      const byKind = new Map<Kind, LoadResult>();
      for (const kind of order) {
        const result = await loadRound(
          kind,
          seconds,
          redis === undefined ? {} : { BENCH_REDIS_URL: redis.url },
        );
        byKind.set(kind, result);
        results.get(kind)?.push(result);
      }
      const rate = (k: Kind) => byKind.get(k)?.reqPerSec ?? NaN;
      ratios.express.push(rate('ours: Express') / rate('express.json() route'));
      ratios.node.push(rate('ours: createNodeHandler') / rate('octokit createNodeMiddleware'));
      ratios.fastify.push(rate('ours: Fastify plugin') / rate('Fastify JSON route'));
      ratios.floorOverRoute.push(rate('Fastify contract floor') / rate('Fastify JSON route'));
      ratios.pluginOverFloor.push(rate('ours: Fastify plugin') / rate('Fastify contract floor'));
      pipelines.push(inProcess<number>('pipeline'));
      memoryRuns.push(storeBench('MemoryStore'));
      console.error(`round ${round + 1}/${rounds} done`);
    }
  } finally {
    redis?.stop();
  }

  console.log(
    `\n${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; ${rounds} rounds of ${seconds} s, 32 connections, distinct event ids, ~1.5 KB bodies; medians:`,
  );
  console.log('| receiver | req/s | p99 ms | non-2xx | not processed | server CPU µs/req | of it user |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const [kind, list] of results) {
    const m = (f: (r: LoadResult) => number) => median(list.map(f));
    console.log(
      `| ${kind} | ${fmt(m((r) => r.reqPerSec))} | ${fmt(m((r) => r.p99Ms))} | ${list.reduce((s, r) => s + r.non2xx, 0)} | ${list.reduce((s, r) => s + r.notProcessed, 0)} | ${fmt(m((r) => r.cpuMicrosPerRequest))} | ${fmt(m((r) => r.userMicrosPerRequest))} |`,
    );
  }
  // The least of the rounds, as for the stores' times (bestRows): a spell of the host only adds.
  const pipeline = Math.min(...pipelines);
  const memory = inProcess<number[]>('memory');
  const goals = [
    ['Express adapter / express.json() route', Math.min(...ratios.express), median(ratios.express), 0.95],
    ['createNodeHandler / octokit createNodeMiddleware', Math.min(...ratios.node), median(ratios.node), 1.1],
    ['Fastify plugin / Fastify JSON route', Math.min(...ratios.fastify), median(ratios.fastify), 0.9],
  ] as const;
  console.log('\ngoal                                             min    median  goal');
  let met = true;
  for (const [name, min, med, goal] of goals) {
    // With --only, a ratio whose receivers did not run is no figure, and no verdict.
    if (Number.isNaN(med)) {
      console.log(`${name.padEnd(48)}   (not run with --only ${only})`);
      continue;
    }
    met &&= med >= goal;
    console.log(
      `${name.padEnd(48)} ${fmt(min, 2).padStart(5)}  ${fmt(med, 2).padStart(6)}  ≥ ${goal}  ${med >= goal ? 'met' : 'NOT met'}`,
    );
  }
  // What keeping the contract costs by hand on Fastify (bench/fastify-contract-floor.ts): figures, no goal.
  for (const [name, list] of [
    ['Fastify contract floor / Fastify JSON route', ratios.floorOverRoute],
    ['Fastify plugin / Fastify contract floor', ratios.pluginOverFloor],
  ] as const) {
    if (!list.some((r) => !Number.isNaN(r))) continue;
    console.log(
      `${name.padEnd(48)} ${fmt(Math.min(...list), 2).padStart(5)}  ${fmt(median(list), 2).padStart(6)}  (no goal)`,
    );
  }
  console.log(
    `in-process pipeline: ${fmt(pipeline, 2)} µs/event, the least of the rounds' ${pipelines.map((p) => fmt(p, 2)).join(', ')} (median ${fmt(median(pipelines), 2)}; goal ≤ 12) ${pipeline <= 12 ? 'met' : 'NOT met'}`,
  );
  const growth = (memory.at(-1) ?? 0) - (memory[0] ?? 0);
  console.log(
    `heap after gc, every 100k of 1M distinct events (MB): ${memory.map((m) => fmt(m)).join(' ')} → growth ${fmt(growth, 1)} MB ${Math.abs(growth) < 10 ? '(flat)' : '(NOT flat)'}`,
  );
  met &&= pipeline <= 12 && Math.abs(growth) < 10;
  // The stores' own cost per delivery (bench/store-bench.ts): MemoryStore's times the least of the rounds'.
  const storeRows = [...bestRows(memoryRuns), ...storeBench('RedisStore,PostgresStore')];
  console.table(storeRows);
  const memory_ = storeRows.find((row) => row.store === 'MemoryStore');
  const atCap = Number(memory_?.['CPU µs/delivery (at cap, evicting)']);
  const perEntry = Number(memory_?.['bytes/entry']);
  // The goal holds for both ways in: the async methods any caller awaits, and the receiver's calls.
  const receivers = storeRows.find(
    (row) => row.store === "MemoryStore, the receiver's calls answered at once",
  );
  const atCapNow = Number(receivers?.['CPU µs/delivery (at cap, evicting)']);
  console.log(
    `MemoryStore at its cap (the least of the rounds): claim + markDone ${fmt(atCap, 2)} µs through its async methods, ${fmt(atCapNow, 2)} µs as the receiver calls it (goal ≤ 2, both) ${Math.max(atCap, atCapNow) <= 2 ? 'met' : 'NOT met'}; ${fmt(perEntry)} bytes/entry (goal ≤ 350) ${perEntry <= 350 ? 'met' : 'NOT met'}`,
  );
  met &&= atCap <= 2 && atCapNow <= 2 && perEntry <= 350;
  // Sync mode against the durable inbox on each engine (bench/inbox-bench.ts): figures, no goal.
  const inboxRows = JSON.parse(
    execFileSync(process.execPath, [path.join(__dirname, 'inbox-bench.js'), '--json'], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    }),
  ) as Record<string, number | string>[];
  console.log('\nsync vs durable inbox, a 20 ms handler, 32 connections:');
  console.table(inboxRows);
  // The inbox's acknowledgement against a bare node:http + queue.add / boss.send (bench/inbox-ack-bench.ts).
  const ack = JSON.parse(
    execFileSync(
      process.execPath,
      [
        path.join(__dirname, 'inbox-ack-bench.js'),
        '--json',
        '--rounds',
        String(rounds),
        '--seconds',
        String(seconds),
      ],
      { encoding: 'utf8', maxBuffer: 1 << 20 },
    ),
  ) as AckBench;
  console.log('\nthe inbox acknowledging against the bare engine add, no worker, 32 connections:');
  console.table(ack.rows);
  for (const [name, worst, med, goal, higher] of ackGoals(ack)) {
    const ok = higher ? med >= goal : med <= goal;
    met &&= ok;
    console.log(
      `${name.padEnd(48)} ${fmt(worst, 2).padStart(5)}  ${fmt(med, 2).padStart(6)}  ${higher ? '≥' : '≤'} ${goal}  ${ok ? 'met' : 'NOT met'}`,
    );
  }
  // What keeping the contract costs by hand on BullMQ (bench/ack-contract-floor.ts): figures, no goal.
  for (const [name, worst, med] of floorRows(ack))
    console.log(`${name.padEnd(48)} ${fmt(worst, 2).padStart(5)}  ${fmt(med, 2).padStart(6)}  (no goal)`);
  // The receiver under a 10× burst, with and without maxInFlight (bench/burst-bench.ts): figures, no goal.
  const burstRows = JSON.parse(
    execFileSync(process.execPath, [path.join(__dirname, 'burst-bench.js'), '--json'], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    }),
  ) as Record<string, number | string>[];
  console.log(
    '\na 10× burst (320 clients against the usual 32), a 20 ms handler, with and without maxInFlight:',
  );
  console.table(burstRows);
  const coldStartMet = coldStartReport();
  met &&= coldStartMet;
  process.exitCode = met ? 0 : 1;
}

void main();
