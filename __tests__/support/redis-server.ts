import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { findBinary, waitFor } from './server-binary';
import { describeWithBinary, startTempServer, type ServerBinary, type TempServer } from './temp-server';

const binary = findBinary('redis-server', ['/usr/bin', '/usr/local/bin']);
const REDIS: ServerBinary = {
  name: 'redis',
  what: 'redis-server',
  found: binary !== undefined,
  install: 'apt-get install redis-server',
};

/** `describe` for a suite that needs redis-server (skips loudly without it, fails in CI). */
export const describeWithRedis = describeWithBinary(REDIS);

/**
 * A redis-server of the tests': `stop` sends SIGTERM and waits for its exit; `start` brings it back
 * empty, or with its keys when started `persistent`; `pause` freezes the process, a slow Redis at its worst.
 */
export type RedisServer = TempServer;

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
  return startTempServer(REDIS, async (dir) => (port) => {
    let child: ChildProcess | undefined;
    let output = '';
    return {
      url: `redis://127.0.0.1:${port}`,
      start: async () => {
        const durability = persistent
          ? ['--appendonly', 'yes', '--appendfsync', 'always']
          : ['--appendonly', 'no'];
        const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...durability];
        // startTempServer only calls this once it found the binary.
        child = spawn(
          binary as string,
          [...args, '--dir', dir, '--daemonize', 'no', '--loglevel', 'warning'],
          {
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        child.stdout?.on('data', (d: Buffer) => void (output += d.toString()));
        child.stderr?.on('data', (d: Buffer) => void (output += d.toString()));
        try {
          await waitFor(`redis-server on port ${port}`, () => pong(port), 10_000);
        } catch (error) {
          child.kill('SIGKILL');
          throw new Error(`${(error as Error).message}; it said: ${output.slice(-2000)}`);
        }
      },
      stop: async () => {
        const running = child;
        child = undefined;
        if (running === undefined || running.exitCode !== null) return;
        const exited = new Promise((resolve) => running.once('exit', resolve));
        running.kill('SIGTERM');
        const timer = setTimeout(() => running.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      },
      signal: (signal) => void child?.kill(signal),
    };
  });
}
