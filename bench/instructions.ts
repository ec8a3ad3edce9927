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

function totalInstructions(dir: string): number {
  const dumps = readdirSync(dir).filter((f) => /^cg\.\d+\.\d+$/.test(f));
  let total = 0;
  for (const dump of dumps) {
    const line = readFileSync(path.join(dir, dump), 'utf8').match(/^(?:summary|totals): (\d+)/m);
    total += Number(line?.[1] ?? 0);
  }
  return total;
}

/** Instructions one request of `kind` costs its server, after a warm-up, under callgrind. */
export async function instructionsPerRequest(kind: Kind): Promise<number> {
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
    return totalInstructions(dir) / MEASURED;
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

/** The floor every pair is read against: a bare node:http server that only parses the JSON. */
export const INSTRUCTION_FLOOR: Kind = 'node:http + JSON.parse';

/**
 * Instructions per request of the floor and of every pair whose door's name contains `only` (all
 * pairs without it), or undefined when valgrind is not installed.
 */
export async function instructionCounts(only?: string): Promise<Map<Kind, number> | undefined> {
  if (spawnSync('valgrind', ['--version']).status !== 0) return undefined;
  const kinds: Kind[] = [INSTRUCTION_FLOOR];
  for (const [ours, peer] of INSTRUCTION_PAIRS)
    if (only === undefined || ours.includes(only)) kinds.push(ours, peer);
  const counts = new Map<Kind, number>();
  // One at a time: two servers under valgrind at once would only share the cores, not the count.
  for (const kind of kinds) counts.set(kind, await instructionsPerRequest(kind));
  return counts;
}
