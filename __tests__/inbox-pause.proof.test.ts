import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Inbox } from '../lib';
import { PAUSE_READ_MS } from '../lib/pg-boss/pause-flag';
import { builtPackage } from './support/built-package';
import { sleep } from './support/contract-rows';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually } from './support/inbox-engines';
import { queueHeld } from './support/queue-held';

const EVENTS = 200;
/** How long the paused queue is watched for a try that should not start (the 5 s). */
const WATCH_MS = 5_000;
/** A pause made here reaches a worker in another process within one read of the flag and a fetch. */
const PAUSE_REACHES_MS = 2 * PAUSE_READ_MS;
const WORKERS = 2;

/** A worker in a process of its own, writing the id of every try it starts to its ledger. */
async function startWorker(name: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(__dirname, 'support', 'pause-worker', 'worker.js')], {
    env: { ...env, NAME: name },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => void (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => void (err = (err + d.toString()).slice(-4000)));
  const deadline = Date.now() + 60_000;
  while (!out.includes(`READY ${name}\n`)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`worker ${name} did not start: ${err}`);
    }
    await sleep(20);
  }
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

let queues = 0;

describeEachEngine('pausing the inbox on $name, its workers in two processes', (engine, server) => {
  let pkg: string;
  let dir: string;
  const children: ChildProcess[] = [];
  const opened: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    const { bin } = await builtPackage();
    pkg = path.resolve(bin, '..', '..', '..');
  }, 240_000);
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sw-pause-proof-'));
  });
  afterEach(async () => {
    for (const child of children.splice(0)) await stop(child);
    for (const o of opened.splice(0).reverse()) await o.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every try the worker processes started, by event id. */
  function tries(): Map<string, number> {
    const runs = new Map<string, number>();
    for (let i = 0; i < WORKERS; i++) {
      let text = '';
      try {
        text = readFileSync(path.join(dir, `tries-${i}.log`), 'utf8');
      } catch {
        continue; // No try yet.
      }
      for (const id of text.split('\n').filter(Boolean)) runs.set(id, (runs.get(id) ?? 0) + 1);
    }
    return runs;
  }
  const total = (runs: Map<string, number>) => [...runs.values()].reduce((a, b) => a + b, 0);

  it(`holds ${EVENTS} events answered queued while neither worker process starts a try (${WATCH_MS / 1000} s); resumed, each runs once`, async () => {
    const name = `pause-proof-${process.pid}-${++queues}`;
    const inbox: Inbox = server().inbox(name);
    opened.push(inbox);
    for (let i = 0; i < WORKERS; i++)
      children.push(
        await startWorker(`w${i}`, {
          ...process.env,
          SW_PKG: pkg,
          ENGINE: engine.name,
          URL: server().url,
          QUEUE: name,
          LEDGER: path.join(dir, `tries-${i}.log`),
        }),
      );
    // Paused here, after the workers started: each must hear of it from the engine.
    await inbox.pause();
    await sleep(PAUSE_REACHES_MS);
    const ids = await queueHeld(inbox, EVENTS, 'pause_proof', opened);

    await sleep(WATCH_MS);
    expect(total(tries())).toBe(0);
    const held = await inbox.status();
    expect([held.paused, held.waiting + held.delayed, held.active]).toEqual([true, EVENTS, 0]);
    expect(children.every((c) => c.exitCode === null)).toBe(true);

    await inbox.resume();
    await eventually('every held event runs', () => tries().size === EVENTS, 60_000);
    await eventually('the queue empties', async () => {
      const s = await inbox.status();
      return s.waiting + s.delayed + s.active === 0;
    });
    const runs = tries();
    expect([...runs.keys()].sort()).toEqual([...ids].sort());
    expect(total(runs)).toBe(EVENTS);
  }, 180_000);
});
