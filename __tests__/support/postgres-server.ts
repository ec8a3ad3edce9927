import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

type RunAs = { uid?: number; gid?: number; env: NodeJS.ProcessEnv; timeout: number };

/**
 * A fresh cluster's data directory, made by initdb once per machine, PostgreSQL version and user, and
 * copied for each server: initdb takes seconds of a busy machine's time, a copy a tenth of one, and
 * its copy is the same fresh cluster. Made in a staging folder and renamed into place, so a file that
 * finds it finds it whole, and two test files making it at once both succeed (the second one's copy is
 * dropped).
 */
async function templateData(initdbPath: string, as: RunAs): Promise<string> {
  const { stdout: version } = await run(initdbPath, ['--version'], as);
  const key = createHash('sha256').update(`${initdbPath}\n${version}\n${as.uid ?? process.getuid?.()}`);
  const root = path.join(tmpdir(), `sw-postgres-template-${key.digest('hex').slice(0, 16)}`);
  const data = path.join(root, 'data');
  if (existsSync(path.join(data, 'PG_VERSION'))) return data;
  const staging = mkdtempSync(path.join(tmpdir(), 'sw-postgres-template-staging-'));
  if (as.uid !== undefined && as.gid !== undefined) chownSync(staging, as.uid, as.gid);
  try {
    await run(
      initdbPath,
      ['-D', path.join(staging, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '-N'],
      as,
    );
    renameSync(staging, root);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    // Another test file renamed its own into place first: as good as ours.
    if (!existsSync(path.join(data, 'PG_VERSION'))) throw error;
  }
  return data;
}

/** Starts a real PostgreSQL (a fresh cluster + pg_ctl) in a temporary directory on a free 127.0.0.1 port. */
export async function startPostgresServer(): Promise<PostgresServer> {
  return startTempServer(POSTGRES, async (dir) => {
    // startTempServer only calls this once it found both binaries.
    const [initdbPath, pgCtlPath] = [initdb as string, pgCtl as string];
    const user = serverUser();
    if (user) chownSync(dir, user.uid, user.gid);
    const as: RunAs = { ...user, env: { ...process.env, LC_ALL: 'C' }, timeout: 60_000 };
    const data = path.join(dir, 'data');
    // -a keeps the owner (the server's user) and the folder's 0700, which PostgreSQL requires.
    await run('cp', ['-a', await templateData(initdbPath, as), data], { timeout: 60_000 });
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
