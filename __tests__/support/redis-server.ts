import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeWithServer, findBinary, freePort, waitFor } from './server-binary';

const binary = findBinary('redis-server', ['/usr/bin', '/usr/local/bin']);

/** `describe` for a suite that needs redis-server (skips loudly without it, fails in CI). */
export const describeWithRedis = describeWithServer(
  binary !== undefined,
  'redis-server',
  'install it (Debian: apt-get install redis-server) or run CI=true to make this a failure',
);

export interface RedisServer {
  port: number;
  url: string;
  /** Stops the server (SIGTERM, then waits for its exit). */
  stop(): Promise<void>;
  /** Starts it again on the same port: empty, or with its keys when started `persistent`. */
  start(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open and nothing answers, a slow Redis at its worst. */
  pause(): void;
  /** Lets a paused server go on (SIGCONT). */
  resume(): void;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
}

function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500, () => socket.destroy());
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      resolve(data.toString().startsWith('+PONG'));
      socket.destroy();
    });
  });
}

/**
 * Starts a real redis-server on a free 127.0.0.1 port in a temporary directory; `persistent` turns on
 * the append-only file with an fsync per write, so a restart keeps every acknowledged key.
 */
export async function startRedisServer({ persistent = false } = {}): Promise<RedisServer> {
  if (binary === undefined) {
    throw new Error(
      'redis-server is not installed: apt-get install redis-server (CI=true makes this a failure)',
    );
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'sw-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';

  const start = async () => {
    const durability = persistent
      ? ['--appendonly', 'yes', '--appendfsync', 'always']
      : ['--appendonly', 'no'];
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...durability];
    child = spawn(binary, [...args, '--dir', dir, '--daemonize', 'no', '--loglevel', 'warning'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => void (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => void (output += d.toString()));
    try {
      await waitFor(`redis-server on port ${port}`, () => pong(port), 10_000);
    } catch (error) {
      child.kill('SIGKILL');
      throw new Error(`${(error as Error).message}; it said: ${output.slice(-2000)}`);
    }
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    const timer = setTimeout(() => running.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    close: async () => {
      child?.kill('SIGCONT');
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
