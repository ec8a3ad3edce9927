// npm run bench -- --instructions: user-space instructions per request under callgrind, ours against
// octokit. Counted, not timed, so the figure is the same on a busy machine (the kernel's share of a
// socket write is not counted: it is the same for both).
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
      path.join(__dirname, 'bench-server.js'),
      kind,
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('the server under valgrind did not start in 120 s')),
        120_000,
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

/** Ours and octokit's instructions per request, or undefined when valgrind is not installed. */
export async function instructionRatio(): Promise<{ ours: number; octokit: number } | undefined> {
  if (spawnSync('valgrind', ['--version']).status !== 0) return undefined;
  const ours = await instructionsPerRequest('ours: createNodeHandler');
  const octokit = await instructionsPerRequest('octokit createNodeMiddleware');
  return { ours, octokit };
}
