// The CLI's reading commands (`inbox status`, `inbox dead-letters`) change nothing on the queue's
// server, and a queue that is not there is an error naming the closest one.
import { Writable } from 'node:stream';
import { Client } from 'pg';
import { createEventRouter, RetryLater } from '../lib';
import { runCli } from '../lib/cli/program';
import { createOutput } from '../lib/cli/output';
import { normalizeEvent } from '../lib/events/normalize-event';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery, type QueuedDelivery } from '../lib/inbox/queued-delivery';
import { pgBossInbox } from '../lib/pg-boss';
import { buildEvent } from '../lib/testing';
import { eventually } from './support/inbox-engines';
import { describeWithPostgres, startPostgresServer, type PostgresServer } from './support/postgres-server';

function queued(id: string): QueuedDelivery {
  const envelope = buildEvent('ag.access_pass.issued', {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

/** Runs the CLI in this process; what it wrote, line by line. */
async function cli(...argv: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const sink = (lines: string[]) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
  const out = createOutput({ stdout: sink(stdout), stderr: sink(stderr), env: {} });
  const code = await runCli(argv, { out, env: {}, interrupted: () => new Promise(() => undefined) });
  return { code, stdout, stderr };
}

/** Every schema, relation and row of the database `url` (rows as a digest per table). */
async function catalog(url: string): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string; relname: string; relkind: string }>(
      `SELECT n.nspname, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') ORDER BY 1, 2`,
    );
    const schemas = await client.query<{ nspname: string }>(
      `SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' ORDER BY 1`,
    );
    const lines = [...schemas.rows.map((r) => `schema ${r.nspname}`)];
    for (const r of rows) {
      lines.push(`${r.relkind} ${r.nspname}.${r.relname}`);
      if (r.relkind !== 'r') continue;
      const digest = await client.query<{ d: string }>(
        `SELECT count(*) || ':' || md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS d
           FROM "${r.nspname}"."${r.relname}" t`,
      );
      lines.push(`  rows ${digest.rows[0]?.d}`);
    }
    return lines;
  } finally {
    await client.end();
  }
}

describeWithPostgres('inbox status and dead-letters on pg-boss', () => {
  let server: PostgresServer;
  let fresh: string;
  beforeAll(async () => {
    server = await startPostgresServer();
    const admin = new Client({ connectionString: server.url });
    await admin.connect();
    await admin.query('CREATE DATABASE fresh');
    await admin.end();
    fresh = server.url.replace(/\/postgres$/, '/fresh');
    // One event waiting, one in backoff (RetryLater 1 h), one dead letter, then nothing runs.
    const inbox = pgBossInbox({ connectionString: server.url });
    const worker = await inbox.startWorker(
      createEventRouter().onAny((event) => {
        if (event.id === 'evt-delayed') throw new RetryLater('busy', { retryAfterSeconds: 3600 });
        throw new Error('the CRM is down');
      }),
      { attempts: 2, backoff: { delayMs: 10 }, logger: false },
    );
    await inbox.enqueue(queued('evt-dead'));
    await inbox.enqueue(queued('evt-delayed'));
    await eventually('a dead letter and a delayed job', async () => {
      const status = await inbox.status();
      return status.dead === 1 && status.delayed === 1;
    });
    await worker.close();
    await inbox.enqueue(queued('evt-waiting'));
    await inbox.close();
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it('on a database without pg-boss, says there is no such queue and creates nothing', async () => {
    const before = await catalog(fresh);
    for (const command of ['status', 'dead-letters']) {
      const run = await cli('inbox', command, '--url', fresh, '--name', 'servce-webhooks');
      expect(run).toMatchObject({ code: 1, stdout: [] });
      expect(run.stderr).toEqual([
        'error: no queue named "servce-webhooks": this database has no pg-boss schema "pgboss" (a worker or receiver makes it; check --url)',
      ]);
    }
    expect(await catalog(fresh)).toEqual(before);
  }, 60_000);

  it('with a misspelt --name, says which queue is there, and changes nothing', async () => {
    const before = await catalog(server.url);
    for (const command of ['status', 'dead-letters']) {
      const run = await cli('inbox', command, '--url', server.url, '--name', 'servce-webhooks');
      expect(run).toMatchObject({ code: 1, stdout: [] });
      expect(run.stderr).toEqual([
        'error: no queue named "servce-webhooks" (did you mean service-webhooks?)',
      ]);
    }
    expect(await catalog(server.url)).toEqual(before);
  }, 60_000);

  it('reads the queue, a job in backoff shown as delayed apart from the waiting one, and changes nothing', async () => {
    const before = await catalog(server.url);
    const status = await cli('inbox', 'status', '--url', server.url);
    expect(status).toMatchObject({ code: 0, stderr: [] });
    expect(status.stdout).toHaveLength(1);
    expect(status.stdout[0]).toMatch(
      /^pg-boss: 1 waiting, 1 delayed, 0 running, 1 dead letters, oldest waiting \d+ s, oldest delayed \d+ s$/,
    );
    const json = await cli('inbox', 'status', '--url', server.url, '--json');
    expect(JSON.parse(json.stdout.join(''))).toMatchObject({
      engine: 'pg-boss',
      waiting: 1,
      delayed: 1,
      active: 0,
      dead: 1,
      oldestAgeMs: expect.any(Number),
      oldestDelayedAgeMs: expect.any(Number),
    });
    const dead = await cli('inbox', 'dead-letters', '--url', server.url);
    expect(dead).toMatchObject({ code: 0, stderr: [] });
    expect(dead.stdout).toEqual([
      expect.stringMatching(/^evt-dead {2}ag\.access_pass\.issued {2}2 attempts /),
    ]);
    expect(await catalog(server.url)).toEqual(before);
  }, 60_000);
});
