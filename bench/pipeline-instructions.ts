// Instructions per event of the in-process pipeline (`core.handle`), counted by callgrind:
//   npx tsc -p bench/tsconfig.json && node .bench-build/bench/pipeline-instructions.js [events]
// Counted, not timed (the machine is shared): the run under valgrind is zeroed after a warm-up and
// dumped after the counted events, the same way `--instructions` counts a door. A full collection is
// forced before the count (`gc()`), so the window starts from the same heap whatever the build
// allocated in its warm-up; the collector's share of the window (`gc`) and the optimizing compiles
// still running (`compile`) are printed apart: a full collection falling inside a few thousand events
// or not moves the total by tens of thousands, so compare builds side by side, and more than once.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { eventBody, TOKEN } from './bench-events';
import { countInstructions } from './instructions';
import type { WebhookRequest } from '../lib/core/webhook-request';
import { makeCore } from './stages';

const HEADERS: Record<string, string> = {
  'content-type': 'application/cloudevents+json; charset=utf-8',
  authorization: `Bearer ${TOKEN}`,
  'user-agent': 'Service-Webhooks/1.0',
};
const WARM_UP = 5000;
const header = (name: string) => HEADERS[name];

/** The child: warms up, then runs a batch of events each time it reads a line, telling when done. */
async function child(): Promise<void> {
  const core = makeCore();
  let offset = 0;
  let bodies: Buffer[] = [];
  const run = async () => {
    for (const bytes of bodies) {
      const request: WebhookRequest = {
        method: 'POST',
        header,
        hasHeaderPrefix: () => false,
        body: { hasBody: true, read: async () => bytes },
      };
      const { answer } = await core.handle(request);
      if (answer.status !== 200) throw new Error(answer.body);
    }
  };
  const lines = createInterface({ input: process.stdin });
  process.stdout.write('ready\n');
  // A number builds that many bodies (not counted: the test's input is not the pipeline's cost),
  // `go` runs them.
  for await (const line of lines) {
    if (line === 'go') {
      await run();
      process.stdout.write('done\n');
      continue;
    }
    const n = Number(line);
    if (!(n > 0)) break;
    bodies = Array.from({ length: n }, () => Buffer.from(eventBody(offset++, 'i')));
    (globalThis as { gc?: () => void }).gc?.();
    process.stdout.write('built\n');
  }
}

async function parent(events: number): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pipe-callgrind-'));
  const proc = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${path.join(dir, 'cg.%p')}`,
      process.execPath,
      '--single-threaded',
      '--predictable-gc-schedule',
      '--expose-gc',
      __filename,
      '--child',
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: proc.stdout });
  const queued: string[] = [];
  let waiting: ((line: string) => void) | undefined;
  lines.on('line', (line) => (waiting ? waiting(line) : queued.push(line)));
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const line = queued.shift();
      if (line !== undefined) return resolve(line);
      waiting = (l) => {
        waiting = undefined;
        resolve(l);
      };
      proc.once('exit', () => reject(new Error('the child under valgrind ended early')));
    });
  try {
    await next();
    for (const n of [WARM_UP, events]) {
      proc.stdin.write(`${n}\n`);
      await next();
      if (n === events) execFileSync('callgrind_control', ['--zero', String(proc.pid)], { stdio: 'ignore' });
      proc.stdin.write('go\n');
      await next();
    }
    execFileSync('callgrind_control', ['--dump', String(proc.pid)], { stdio: 'ignore' });
    const count = countInstructions(dir);
    const perEvent = (n: number) => Math.round(n / events);
    process.stdout.write(
      `${JSON.stringify({ events, instructionsPerEvent: perEvent(count.total), gc: perEvent(count.gc), compile: perEvent(count.compile) })}\n`,
    );
  } finally {
    proc.kill('SIGKILL');
    // PIPELINE_CALLGRIND_KEEP=1 keeps the dumps, for callgrind_annotate.
    if (process.env.PIPELINE_CALLGRIND_KEEP === '1') process.stderr.write(`callgrind dumps kept in ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--child')) void child();
else void parent(Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 3000));
