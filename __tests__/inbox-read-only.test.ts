// The CLI's reading commands (`inbox status`, `inbox dead-letters`) change nothing on the queue's
// server, and a queue that is not there is an error naming the closest one.
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { createEventRouter, RetryLater } from '../lib';
import { runCli } from '../lib/cli/program';
import { createOutput } from '../lib/cli/output';
import { normalizeEvent } from '../lib/events/normalize-event';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery, type QueuedDelivery } from '../lib/inbox/queued-delivery';
import { bullmqInbox } from '../lib/bullmq';
import { pgBossInbox } from '../lib/pg-boss';
import { buildEvent } from '../lib/testing';
import { eventually } from './support/inbox-engines';
import { describeWithPostgres, startPostgresServer, type PostgresServer } from './support/postgres-server';
import { describeWithRedis, startRedisServer } from './support/redis-server';

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

/** Both reading commands on `url` with a misspelt --name: exit 1 saying `message`, and `snapshot` unchanged. */
async function expectNoQueue(url: string, message: string, snapshot: (url: string) => Promise<string[]>) {
  const before = await snapshot(url);
  for (const command of ['status', 'dead-letters']) {
    const run = await cli('inbox', command, '--url', url, '--name', 'servce-webhooks');
    expect(run).toMatchObject({ code: 1, stdout: [] });
    expect(run.stderr).toEqual([`error: ${message}`]);
  }
  expect(await snapshot(url)).toEqual(before);
}

/** Both reading commands on `url`: one line each, matching `status` and `dead`, and `snapshot` unchanged. */
async function expectReads(
  url: string,
  lines: { status: RegExp; dead: RegExp },
  snapshot: (url: string) => Promise<string[]>,
) {
  const before = await snapshot(url);
  for (const [command, line] of [
    ['status', lines.status],
    ['dead-letters', lines.dead],
  ] as const) {
    const run = await cli('inbox', command, '--url', url);
    expect(run).toEqual({ code: 0, stderr: [], stdout: [expect.stringMatching(line)] });
  }
  expect(await snapshot(url)).toEqual(before);
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
    await expectNoQueue(
      fresh,
      'no queue named "servce-webhooks": this database has no pg-boss schema "pgboss" (a worker or receiver makes it; check --url)',
      catalog,
    );
  }, 60_000);

  it('with a misspelt --name, says which queue is there, and changes nothing', async () => {
    await expectNoQueue(
      server.url,
      'no queue named "servce-webhooks" (did you mean service-webhooks?)',
      catalog,
    );
  }, 60_000);

  it('reads the queue, a job in backoff shown as delayed apart from the waiting one, and changes nothing', async () => {
    await expectReads(
      server.url,
      {
        status:
          /^pg-boss: 1 waiting, 1 delayed, 0 running, 1 dead letters \(1 open issue\), oldest waiting \d+ s, oldest delayed \d+ s$/,
        dead: /^evt-dead {2}ag\.access_pass\.issued {2}2 attempts /,
      },
      catalog,
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
  }, 60_000);
});

/** Every key of the Redis at `url`, with its type and its value as DUMP serializes it. */
async function keyspace(url: string): Promise<string[]> {
  const redis = new Redis(url);
  try {
    const keys = (await redis.keys('*')).sort();
    const lines: string[] = [];
    for (const key of keys)
      lines.push(`${key} ${await redis.type(key)} ${(await redis.dumpBuffer(key)).toString('hex')}`);
    return lines;
  } finally {
    redis.disconnect();
  }
}

describeWithRedis('inbox status and dead-letters on BullMQ', () => {
  let server: Awaited<ReturnType<typeof startRedisServer>>;
  let empty: Awaited<ReturnType<typeof startRedisServer>>;
  beforeAll(async () => {
    [server, empty] = await Promise.all([startRedisServer(), startRedisServer()]);
    // One dead letter, one waiting event, then nothing runs.
    const inbox = bullmqInbox({ connection: server.url, logger: false });
    const worker = await inbox.startWorker(
      createEventRouter().onAny(() => {
        throw new Error('the CRM is down');
      }),
      { attempts: 1, logger: false },
    );
    await inbox.enqueue(queued('evt-dead'));
    await eventually('a dead letter', async () => (await inbox.status()).dead === 1);
    await worker.close();
    await inbox.enqueue(queued('evt-waiting'));
    await inbox.close();
  }, 60_000);
  afterAll(async () => {
    await Promise.all([server?.close(), empty?.close()]);
  });

  it('on a Redis without the queue, says there is no such queue and writes nothing', async () => {
    await expectNoQueue(empty.url, 'no queue named "servce-webhooks"; check --name', keyspace);
  }, 30_000);

  it('with a misspelt --name, says which queue is there, and changes nothing', async () => {
    await expectNoQueue(
      server.url,
      'no queue named "servce-webhooks" (did you mean service-webhooks?)',
      keyspace,
    );
  }, 30_000);

  it('reads the queue and its dead letters, and changes nothing', async () => {
    await expectReads(
      server.url,
      {
        status:
          /^bullmq: 1 waiting, 0 delayed, 0 running, 1 dead letters \(1 open issue\), oldest waiting \d+ s, oldest delayed none$/,
        dead: /^evt-dead {2}ag\.access_pass\.issued {2}1 attempts /,
      },
      keyspace,
    );
  }, 30_000);
});
