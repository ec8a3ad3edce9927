import { execFile, execFileSync } from 'node:child_process';
import { chownSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { findBinary, postgresBinDirs } from './server-binary';
import { describeWithBinary, startTempServer, type ServerBinary, type TempServer } from './temp-server';

const run = promisify(execFile);
const dirs = [...postgresBinDirs(), '/usr/local/bin', '/usr/local/pgsql/bin'];
const initdb = findBinary('initdb', dirs);
const pgCtl = findBinary('pg_ctl', dirs);

const POSTGRES: ServerBinary = {
  name: 'postgres',
  what: 'PostgreSQL (initdb, pg_ctl)',
  found: initdb !== undefined && pgCtl !== undefined,
  install: 'apt-get install postgresql; its binaries are in /usr/lib/postgresql/<v>/bin',
};

/** `describe` for a suite that needs PostgreSQL (skips loudly without it, fails in CI). */
export const describeWithPostgres = describeWithBinary(POSTGRES);

/**
 * A PostgreSQL of the tests': `url` connects to the `postgres` database as the `postgres` superuser,
 * no password; `stop` is a fast shutdown (connections are cut); `start` brings it back with its data;
 * `pause` freezes the postmaster and every backend.
 */
export type PostgresServer = TempServer;

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` user (or nobody). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
      return { uid: id('-u'), gid: id('-g') };
    } catch {
      // no such user; try the next
    }
  }
  throw new Error('running as root and found neither a postgres nor a nobody user to run PostgreSQL as');
}

/** Sends `signal` to the postmaster (its pid is the first line of postmaster.pid) and its children. */
function signalServer(data: string, signal: NodeJS.Signals): void {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return;
  }
  const pids = [postmaster];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: the ppid is the second field after the parenthesised name.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) pids.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone
    }
  }
}

/** Starts a real PostgreSQL (initdb + pg_ctl) in a temporary directory on a free 127.0.0.1 port. */
export async function startPostgresServer(): Promise<PostgresServer> {
  return startTempServer(POSTGRES, async (dir) => {
    // startTempServer only calls this once it found both binaries.
    const [initdbPath, pgCtlPath] = [initdb as string, pgCtl as string];
    const user = serverUser();
    if (user) chownSync(dir, user.uid, user.gid);
    const as = { ...user, env: { ...process.env, LC_ALL: 'C' }, timeout: 60_000 };
    const data = path.join(dir, 'data');
    await run(
      initdbPath,
      ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '-N'],
      as,
    );
    return (port) => {
      const settings = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
      return {
        url: `postgres://postgres@127.0.0.1:${port}/postgres`,
        start: async () => {
          try {
            await run(
              pgCtlPath,
              ['-D', data, '-l', path.join(dir, 'log'), '-w', '-t', '30', '-o', settings, 'start'],
              as,
            );
          } catch (error) {
            const log = await run('tail', ['-n', '30', path.join(dir, 'log')]).catch(() => ({ stdout: '' }));
            throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${log.stdout}`);
          }
        },
        stop: async () =>
          void (await run(pgCtlPath, ['-D', data, '-m', 'fast', '-w', 'stop'], as).catch(() => undefined)),
        signal: (signal) => signalServer(data, signal),
      };
    };
  });
}
