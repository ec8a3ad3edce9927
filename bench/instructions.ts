// npm run bench -- --instructions: user-space instructions per request under callgrind, each of our
// doors against its peer, and a bare node:http server as the floor. Counted, not timed, on one thread
// with a fixed GC schedule, so the figure moves little on a busy machine (the kernel's share of a
// socket write is not counted: it is the same for every receiver).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kind } from './bench-server';
import { run } from './load-round';

const WARM_UP = 3000;
const MEASURED = 4000;

/** A request's instructions, and two parts of them that are V8's own rather than the code's. */
export interface InstructionCount {
  total: number;
  /**
   * Garbage collection: scavenges, full collections and the incremental marking steps between them.
   * The window of requests holds a full collection or not (the node door makes one in some 10 000
   * requests under this GC schedule; one in its window counted ~120k a request): read it apart.
   */
  gc: number;
  /** Optimizing compilation still running after the warm-up (on the main thread: --single-threaded). */
  compile: number;
}

/** Inclusive instructions of the functions whose names start with these, as callgrind_annotate reads them. */
const GC_FUNCTIONS = ['v8::internal::Heap::CollectGarbage(', 'v8::internal::IncrementalMarking::Step('];
const COMPILE_FUNCTIONS = ['v8::internal::Compiler::CompileOptimized('];

/** The inclusive count of each named function in a dump (its largest line: callers list it again). */
function inclusiveOf(dump: string, prefixes: readonly string[]): number {
  const text = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', dump], {
    maxBuffer: 1 << 28,
  }).toString();
  const largest = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^\s*([\d,]+) \([^)]*\)\s+\S*?:(.*)$/.exec(line);
    if (match === null) continue;
    const [, count = '', name = ''] = match;
    const prefix = prefixes.find((p) => name.startsWith(p));
    if (prefix === undefined) continue;
    largest.set(prefix, Math.max(largest.get(prefix) ?? 0, Number(count.replace(/,/g, ''))));
  }
  let sum = 0;
  for (const value of largest.values()) sum += value;
  return sum;
}

export function countInstructions(dir: string): InstructionCount {
  const dumps = readdirSync(dir).filter((f) => /^cg\.\d+\.\d+$/.test(f));
  const count = { total: 0, gc: 0, compile: 0 };
  for (const dump of dumps) {
    const file = path.join(dir, dump);
    const line = readFileSync(file, 'utf8').match(/^(?:summary|totals): (\d+)/m);
    count.total += Number(line?.[1] ?? 0);
    count.gc += inclusiveOf(file, GC_FUNCTIONS);
    count.compile += inclusiveOf(file, COMPILE_FUNCTIONS);
  }
  return count;
}

/** Instructions one request of `kind` costs its server, after a warm-up, under callgrind. */
export async function instructionsPerRequest(kind: Kind): Promise<InstructionCount> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-callgrind-'));
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--collect-atstart=yes',
      `--callgrind-out-file=${path.join(dir, 'cg.%p')}`,
      process.execPath,
      // V8's background compiler and GC threads make the count wander; on one thread it repeats.
      '--single-threaded',
      // V8 sizes its heap and runs its memory reducer by the clock, and under valgrind the clock is
      // 50 times slower and moves with the machine's load: the same receiver read 249k and 415k a
      // request in two runs. A fixed schedule takes most of that out: two runs side by side read
      // 482.8k and 485.6k, one door at loads of 3 and 15 still 4 % apart.
      '--predictable-gc-schedule',
      path.join(__dirname, 'bench-server.js'),
      kind,
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        // Its start alone is some 20 s of CPU under valgrind, minutes on a machine busy with others.
        () => reject(new Error('the server under valgrind did not start in 600 s')),
        600_000,
      );
      child.stdout.on('data', (chunk: Buffer) => {
        const match = /\{"port":(\d+)\}/.exec(chunk.toString());
        if (!match) return;
        clearTimeout(timer);
        resolve(Number(match[1]));
      });
    });
    const url = `http://127.0.0.1:${port}/hook`;
    await run(url, kind, { amount: WARM_UP }, { notProcessed: 0 });
    execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' });
    const counts = { notProcessed: 0 };
    await run(url, kind, { amount: MEASURED }, counts);
    execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
    if (counts.notProcessed > 0) throw new Error(`${kind}: ${counts.notProcessed} requests not processed`);
    const { total, gc, compile } = countInstructions(dir);
    return { total: total / MEASURED, gc: gc / MEASURED, compile: compile / MEASURED };
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each of our doors beside the peer its speed goal is measured against. */
export const INSTRUCTION_PAIRS = [
  ['ours: createNodeHandler', 'octokit createNodeMiddleware'],
  ['ours: Express', 'express.json() route'],
  ['ours: Fastify plugin', 'Fastify JSON route'],
] as const satisfies readonly (readonly [Kind, Kind])[];

/**
 * A door's contract floor, where one is written: its framework doing by hand only what the contract
 * requires (bench/fastify-contract-floor.ts), counted beside the pair.
 */
export const CONTRACT_FLOORS: Partial<Record<Kind, Kind>> = {
  'ours: Fastify plugin': 'Fastify contract floor',
};

/** The floor every pair is read against: a bare node:http server that only parses the JSON. */
export const INSTRUCTION_FLOOR: Kind = 'node:http + JSON.parse';

/**
 * Instructions per request of the floor and of every pair whose door's name contains `only` (all
 * pairs without it), or undefined when valgrind is not installed.
 */
export async function instructionCounts(only?: string): Promise<Map<Kind, InstructionCount> | undefined> {
  if (spawnSync('valgrind', ['--version']).status !== 0) return undefined;
  const kinds: Kind[] = [INSTRUCTION_FLOOR];
  for (const [ours, peer] of INSTRUCTION_PAIRS)
    if (only === undefined || ours.includes(only)) {
      kinds.push(ours, peer);
      const contract = CONTRACT_FLOORS[ours];
      if (contract !== undefined) kinds.push(contract);
    }
  const counts = new Map<Kind, InstructionCount>();
  // One at a time: two servers under valgrind at once would only share the cores, not the count.
  for (const kind of kinds) counts.set(kind, await instructionsPerRequest(kind));
  return counts;
}
