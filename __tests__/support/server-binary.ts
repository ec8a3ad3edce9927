import { existsSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** The first `name` found on PATH or in `extraDirs`, else undefined. */
export function findBinary(name: string, extraDirs: string[] = []): string | undefined {
  const dirs = [...extraDirs, ...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean)];
  return dirs.map((dir) => path.join(dir, name)).find((file) => existsSync(file));
}

/** Debian's PostgreSQL layout, newest version first: /usr/lib/postgresql/<v>/bin. */
export function postgresBinDirs(): string[] {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => path.join(root, v, 'bin'));
}

type Suite = (name: string, body: () => void) => void;
const warned = new Set<string>();

/**
 * `describe` when the server can run here; on a machine without it, `describe.skip` after one loud
 * line naming what to install. In CI (`CI=true`) a missing server never skips: the suite runs and its
 * start fails, because a green run that tested nothing would hide it. Decided when called, so a
 * script outside jest (the bench) can import the server helpers.
 */
export function describeWithServer(found: boolean, what: string, install: string): Suite {
  return (name, body) => {
    const { describe } = globalThis as unknown as { describe: Suite & { skip: Suite } };
    if (found || process.env.CI === 'true') return describe(name, body);
    if (!warned.has(what)) {
      warned.add(what);
      // Straight to stderr: one plain line, without jest's code frame around a console.warn.
      process.stderr.write(`\n[service-webhooks tests] SKIPPED: ${what} is not installed here; ${install}\n`);
    }
    return describe.skip(name, body);
  };
}

/**
 * The lowest port the kernel hands out itself (a connect's local port, a listen on port 0): the start
 * of Linux's `ip_local_port_range`, else its default.
 */
export function kernelPortsFrom(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 0) return low;
  } catch {
    // Not Linux: its default below.
  }
  return 32768;
}

/** The lowest port `freePort` picks, well above the well-known ones. */
export const FIRST_PORT = 10_000;

/** Whether `port` can be listened on at 127.0.0.1 now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A loopback port that was free a moment ago, outside the range the kernel picks ports from: a
 * server stopped and restarted on it (a chaos restart, a killed receiver) never finds it taken by an
 * outgoing connection that got it as its local port meanwhile.
 */
export async function freePort(): Promise<number> {
  const low = kernelPortsFrom();
  // A kernel range reaching down to here leaves no room below it: then any port the kernel gives.
  for (let tries = 0; tries < 50 && low > FIRST_PORT; tries++) {
    const port = FIRST_PORT + Math.floor(Math.random() * (low - FIRST_PORT));
    if (await bindable(port)) return port;
  }
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Waits until `ready()` resolves true, trying every 50 ms, failing after `timeoutMs`. */
export async function waitFor(what: string, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ready().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
}
