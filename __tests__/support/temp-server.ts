import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeWithServer, freePort } from './server-binary';

/** A server binary the tests start themselves, and what to tell a person who does not have it. */
export interface ServerBinary {
  /** Short, for the temporary directory's name: `sw-<name>-…`. */
  name: string;
  /** What is missing, as the skip line names it: `redis-server`, `PostgreSQL (initdb, pg_ctl)`. */
  what: string;
  /** Whether it was found on this machine. */
  found: boolean;
  /** How to install it: `apt-get install redis-server`. */
  install: string;
}

/** A server started by {@link startTempServer}: on a free 127.0.0.1 port, in its own temporary directory. */
export interface TempServer {
  port: number;
  url: string;
  /** Stops the server. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open and nothing answers. */
  pause(): void;
  /** Lets a paused server go on (SIGCONT). */
  resume(): void;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

/** How {@link startTempServer} runs one kind of server on its port. */
export interface ServerControl {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Sends `signal` to the server's processes, if it runs. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void;
}

/** `describe` for a suite that needs `server` (skips loudly without it, fails in CI). */
export function describeWithBinary(server: ServerBinary) {
  return describeWithServer(
    server.found,
    server.what,
    `install it (Debian: ${server.install}) or run CI=true to make this a failure`,
  );
}

/**
 * Starts `server` in a new temporary directory on a free 127.0.0.1 port. `prepare` readies the
 * directory (PostgreSQL's initdb) and gives the control for a port; the port is taken after it, just
 * before the first start, so a slow `prepare` does not widen the window in which another process may
 * take it. Without the binary it throws naming what to install; a failed start is stopped and its
 * directory removed.
 */
export async function startTempServer(
  server: ServerBinary,
  prepare: (dir: string) => Promise<(port: number) => ServerControl>,
): Promise<TempServer> {
  if (!server.found) {
    throw new Error(`${server.what} is not installed: ${server.install} (CI=true makes this a failure)`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), `sw-${server.name}-`));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  let port: number;
  let running: ServerControl | undefined;
  try {
    const control = await prepare(dir);
    port = await freePort();
    running = control(port);
    await running.start();
  } catch (error) {
    await running?.stop().catch(() => undefined);
    remove();
    throw error;
  }
  return {
    port,
    url: running.url,
    start: running.start,
    stop: running.stop,
    pause: () => running.signal('SIGSTOP'),
    resume: () => running.signal('SIGCONT'),
    close: async () => {
      running.signal('SIGCONT');
      await running.stop();
      remove();
    },
  };
}
