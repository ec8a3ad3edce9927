import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { eventBody, TOKEN } from './bench-events';
import { OCTOKIT_SECRET, type Kind } from './bench-server';

export interface LoadResult {
  kind: Kind;
  reqPerSec: number;
  p99Ms: number;
  non2xx: number;
  notProcessed: number;
  cpuMicrosPerRequest: number;
  /** The user-space share of it (the rest is the kernel's: mostly the socket reads and writes). */
  userMicrosPerRequest: number;
}

const CONNECTIONS = 32;
/** On a 2-core machine the server gets one core and the load generator the other, every round alike. */
const SERVER_CPU = 1;
const LOAD_CPU = 0;

/** `taskset` where it exists (util-linux); elsewhere the scheduler decides, as before. */
export function pin(pid: number | undefined, cpu: number): void {
  if (pid === undefined || os.cpus().length < 2) return;
  spawnSync('taskset', ['-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}

/** Pins this process, the load generator, away from the servers' core. */
export function pinLoadGenerator(): void {
  pin(process.pid, LOAD_CPU);
}
let sequence = 0;

function message<T>(child: ChildProcess, test: (m: unknown) => boolean): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the bench server did not answer within 30 s')), 30_000);
    const on = (m: unknown) => {
      if (!test(m)) return;
      clearTimeout(timer);
      child.off('message', on);
      resolve(m as T);
    };
    child.on('message', on);
  });
}

function headersFor(kind: Kind, body: string): Record<string, string> {
  if (kind === 'octokit createNodeMiddleware') {
    return {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': `d${sequence}`,
      'x-hub-signature-256': `sha256=${createHmac('sha256', OCTOKIT_SECRET).update(body).digest('hex')}`,
    };
  }
  return { 'content-type': 'application/cloudevents+json; charset=utf-8', authorization: `Bearer ${TOKEN}` };
}

/** Loads `url` for `seconds`, or with exactly `amount` requests when given as `{ amount }`. */
export async function run(
  url: string,
  kind: Kind,
  length: number | { amount: number },
  counts: { notProcessed: number },
) {
  return autocannon({
    url,
    connections: CONNECTIONS,
    ...(typeof length === 'number' ? { duration: length } : { amount: length.amount }),
    requests: [
      {
        method: 'POST',
        // A new event id on every request, so the idempotency store does real work each time.
        setupRequest: (request) => {
          const body = eventBody(sequence++, kind.startsWith('ours') ? 'o' : 'x');
          return { ...request, body, headers: headersFor(kind, body) };
        },
        onResponse: (status, body) => {
          // Every kind but octokit's (GitHub's answer is its own) says "processed" once it handled the
          // event: a server refusing everything would otherwise be counted as a cheap one.
          if (kind !== 'octokit createNodeMiddleware' && (status !== 200 || !body.includes('"processed"')))
            counts.notProcessed++;
        },
      },
    ],
  });
}

/**
 * Requests each server answers before it is measured: a count, not a time, so a receiver with more
 * code to optimize is not measured while V8 still compiles it (its optimizing compiles ran on for
 * ~9 000 requests, on a thread whose CPU time the round counts) just because a second went by.
 */
export const WARM_UP_REQUESTS = 20_000;

/** Starts `kind` in its own process, warms it up, loads it for `seconds`, and reads its CPU time. */
export async function loadRound(
  kind: Kind,
  seconds: number,
  env: NodeJS.ProcessEnv = {},
): Promise<LoadResult> {
  const child = fork(path.join(__dirname, 'bench-server.js'), [kind], {
    env: { ...process.env, ...env },
    stdio: 'inherit',
  });
  pin(child.pid, SERVER_CPU);
  try {
    const { port } = await message<{ port: number }>(
      child,
      (m) => typeof (m as { port?: number }).port === 'number',
    );
    const url = `http://127.0.0.1:${port}/hook`;
    await run(url, kind, { amount: WARM_UP_REQUESTS }, { notProcessed: 0 });
    const counts = { notProcessed: 0 };
    child.send('start');
    const result = await run(url, kind, seconds, counts);
    child.send('stop');
    const cpu = await message<{ cpuMicros: number; userMicros: number; requests: number }>(
      child,
      (m) => typeof (m as { cpuMicros?: number }).cpuMicros === 'number',
    );
    return {
      kind,
      reqPerSec: result.requests.average,
      p99Ms: result.latency.p99,
      non2xx: result.non2xx,
      notProcessed: counts.notProcessed,
      cpuMicrosPerRequest: cpu.cpuMicros / Math.max(1, cpu.requests),
      userMicrosPerRequest: cpu.userMicros / Math.max(1, cpu.requests),
    };
  } finally {
    child.send('exit');
    await new Promise((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.once('exit', () => resolve(clearTimeout(timer)));
    });
  }
}
