// `service-webhooks inbox replay` as a user runs it: progress on stderr, the result on stdout;
// Ctrl-C stops it between pages with what was put back staying put back, says how far it came and
// exits 130; --dry-run counts and puts nothing back.
import type { Inbox } from '../lib';
import { PAGE } from '../lib/bullmq/bullmq-dead-letters';
import { REPLAY_BATCH } from '../lib/pg-boss/pg-boss-inbox';
import { builtPackage, type BuiltPackage } from './support/built-package';
import { runCli } from './support/cli-process';
import { describeEachEngine } from './support/describe-each-engine';
import { seedDeadLetters } from './support/seed-dead-letters';
import { eventually } from './support/inbox-engines';
import { Client } from 'pg';

let built: BuiltPackage;
beforeAll(async () => {
  built = await builtPackage();
}, 180_000);

const thousands = (n: number) => n.toLocaleString('en-US');

describeEachEngine('service-webhooks inbox replay with progress on $name', (engine, server) => {
  const page = engine.name === 'bullmq' ? PAGE : REPLAY_BATCH;
  const count = 3 * page;
  let round = 0;
  const opened: Inbox[] = [];
  afterEach(async () => {
    for (const inbox of opened.splice(0)) await inbox.close();
  });
  async function seeded() {
    const name = `cli-progress-${process.pid}-${++round}`;
    const inbox = server().inbox(name);
    opened.push(inbox);
    await inbox.status(); // makes the queues
    await seedDeadLetters(engine, server().url, name, count);
    return { inbox, name, url: ['--url', server().url, '--name', name] };
  }

  it('counts on --dry-run and puts nothing back', async () => {
    const { inbox, url } = await seeded();
    const cli = runCli(built.bin, ['inbox', 'replay', '--all', '--dry-run', ...url], built.env);
    expect(await cli.exited).toBe(0);
    expect(cli.stdout).toEqual([
      `would replay ${thousands(count)} dead letters; nothing was put back (--dry-run)`,
    ]);
    const json = runCli(
      built.bin,
      ['inbox', 'replay', '--type', 'ag.hid_org.created', '--dry-run', '--json', ...url],
      built.env,
    );
    expect(await json.exited).toBe(0);
    expect(JSON.parse(json.stdout.join(''))).toEqual({ wouldReplay: count / 3 });
    expect(await inbox.status()).toMatchObject({ waiting: 0, dead: count });
  }, 120_000);

  it('shows each page on stderr (plain lines off a terminal) and the result alone on stdout', async () => {
    const { inbox, url } = await seeded();
    const cli = runCli(built.bin, ['inbox', 'replay', '--all', ...url], built.env);
    expect(await cli.exited).toBe(0);
    expect(cli.stdout).toEqual([`replayed ${thousands(count)} dead letters`]);
    expect(cli.stderr).toEqual(
      [1, 2, 3].map((n) => expect.stringContaining(`replayed ${thousands(n * page)} of ${thousands(count)}`)),
    );
    expect(cli.raw.stderr).not.toContain('\r');
    expect(await inbox.status()).toMatchObject({ waiting: count, dead: 0 });
  }, 120_000);

  it('stops between pages on Ctrl-C: says how far it came, exits 130, none half done, none lost', async () => {
    const { inbox, url } = await seeded();
    // A page under way when Ctrl-C lands, whatever the speed: on pg-boss the job table is held against
    // writes (reads go on), so the first page's redrive waits; on BullMQ the server is frozen once a
    // page is shown.
    const held = engine.name === 'pg-boss' ? await holdWrites(server().url) : undefined;
    const cli = runCli(built.bin, ['inbox', 'replay', '--all', '--timeout', '60s', ...url], built.env);
    try {
      if (held !== undefined) await held.waitedOn();
      else {
        await cli.waitFor(new RegExp(`replayed ${thousands(page)} of ${thousands(count)}`), 60_000);
        server().pause();
      }
      cli.child.kill('SIGINT');
      await cli.waitFor(/stopping once the page under way is put back/, 10_000);
    } finally {
      await held?.release();
      if (held === undefined) server().resume();
    }
    expect(await cli.exited).toBe(130);
    const [last] = cli.stdout;
    const stopped = /^replayed ([\d,]+) of ([\d,]+); stopped$/.exec(last ?? '');
    expect(stopped).not.toBeNull();
    const replayed = Number(stopped![1]!.replace(/,/g, ''));
    expect(stopped![2]).toBe(thousands(count));
    expect(replayed).toBeGreaterThanOrEqual(page);
    expect(replayed).toBeLessThan(count);
    expect(replayed % page).toBe(0);
    expect(await inbox.status()).toMatchObject({ waiting: replayed, dead: count - replayed });
  }, 120_000);
});

/**
 * Holds pg-boss's job table in SHARE mode in an open transaction: reads go on, and a redrive (which
 * writes) waits until `release()`. `waitedOn()` resolves once another session waits on the lock.
 */
async function holdWrites(url: string) {
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE pgboss.job IN SHARE MODE');
  return {
    waitedOn: () =>
      eventually(
        'a redrive waiting on the held table',
        async () => {
          const { rows } = await client.query<{ n: string }>(
            `SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
          );
          return Number(rows[0]!.n) > 0;
        },
        60_000,
      ),
    async release() {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    },
  };
}
