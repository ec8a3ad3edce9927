import { createEventRouter, MemoryStore, type Inbox, type InboxWorkerOptions } from '../lib';
import { bullmqInbox, type BullmqInboxOptions } from '../lib/bullmq';
import { pgBossInbox, type PgBossInboxOptions } from '../lib/pg-boss';
import { captureLogger } from './support/capture-logger';
import { buildEvent } from '../lib/testing';
import { normalizeEvent } from '../lib/events/normalize-event';
import { queuedDelivery } from '../lib/inbox/queued-delivery';
import { describeWithRedis, startRedisServer } from './support/redis-server';
import { bullmqEngine, eventually } from './support/inbox-engines';
import { describeEachEngine } from './support/describe-each-engine';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { redisConnection } from '../lib/bullmq/redis-connection';
import { Queue } from 'bullmq';
import { Cluster, Redis } from 'ioredis';

describe('bullmqInbox refuses what it cannot use, at construction', () => {
  it.each<[string, unknown, RegExp]>([
    ['no options', undefined, /bullmqInbox: takes options/],
    ['neither connection nor queue', {}, /give exactly one of connection .* or queue/],
    ['both', { connection: 'redis://x', queue: {} }, /give exactly one of connection/],
    ['a misspelt key', { conection: 'redis://x' }, /unknown option "conection"; did you mean "connection"\?/],
    [
      'a name with ":"',
      { connection: 'redis://x', name: 'a:b' },
      /name must be a non-empty string without ":"/,
    ],
    [
      'a URL of another scheme',
      { connection: 'http://x' },
      /connection URL must start redis:\/\/ or rediss:\/\//,
    ],
    [
      'a short lock',
      { connection: 'redis://x', lockDurationMs: 10 },
      /lockDurationMs must be a whole number/,
    ],
    [
      'no attempts',
      { connection: 'redis://x', attempts: 0 },
      /attempts must be a whole number ≥ 1 \(got 0\)/,
    ],
    [
      'attempts not a number',
      { connection: 'redis://x', attempts: '3' },
      /attempts must be a whole number ≥ 1/,
    ],
    [
      'a negative maxStalledCount',
      { connection: 'redis://x', maxStalledCount: -1 },
      /maxStalledCount must be a whole number ≥ 0 \(got -1\)/,
    ],
    [
      'a fractional maxStalledCount',
      { connection: 'redis://x', maxStalledCount: 1.5 },
      /maxStalledCount must be a whole number ≥ 0/,
    ],
    [
      'a Redis Cluster client that gives up on commands',
      {
        connection: new Cluster([{ host: '127.0.0.1', port: 1 }], {
          lazyConnect: true,
          redisOptions: { maxRetriesPerRequest: 3 },
        }),
      },
      /\[service-webhooks\] bullmqInbox: a Redis Cluster connection must be made with redisOptions: \{ maxRetriesPerRequest: null \}/,
    ],
  ])('%s', (_name, options, message) => {
    expect(() => bullmqInbox(options as BullmqInboxOptions)).toThrow(message);
  });

  it("refuses a name other than the given queue's", async () => {
    const queue = new Queue('theirs', { connection: { lazyConnect: true } });
    try {
      expect(() => bullmqInbox({ queue, name: 'ours' })).toThrow(
        /name "ours" differs from the queue's own \("theirs"\): leave name out with queue/,
      );
    } finally {
      await queue.close();
    }
  });
});

function deliveryOf(id: string) {
  const envelope = buildEvent('ag.access_pass.issued', {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

describeEachEngine(
  'bullmqInbox on a queue or a client of yours',
  (_engine, server) => {
    it('runs, counts, lists and replays the jobs of a Queue made with its own prefix', async () => {
      const queue = new Queue(`prefixed-${process.pid}`, {
        connection: redisConnection(server().url),
        prefix: 'myapp',
      });
      const inbox = bullmqInbox({ queue, logger: false });
      let broken = true;
      const runs: string[] = [];
      const router = createEventRouter().onAny((event) => {
        runs.push(event.id);
        if (broken) throw new Error('down');
      });
      const worker = await inbox.startWorker(router, { attempts: 1, logger: false });
      try {
        await inbox.enqueue(deliveryOf('evt_prefixed'));
        await eventually('its dead letter', async () => (await inbox.status()).dead === 1, 5_000);
        expect((await inbox.deadLetters()).map((d) => d.delivery.id)).toEqual(['evt_prefixed']);
        broken = false;
        expect(await inbox.replay('evt_prefixed')).toBe(1);
        await eventually('the replay ran', () => runs.length === 2, 5_000);
        await eventually('nothing left', async () => (await inbox.status()).dead === 0, 5_000);
        // The keys are the queue's own: nothing was written under BullMQ's default prefix.
        const redis = new Redis(server().url);
        try {
          expect(await redis.keys(`bull:prefixed-${process.pid}:*`)).toEqual([]);
        } finally {
          redis.disconnect();
        }
      } finally {
        await worker.close();
        await inbox.close();
        await queue.close();
      }
    }, 30_000);

    it('runs the jobs of an ioredis client made without maxRetriesPerRequest: null, leaving it as it was', async () => {
      const client = new Redis(server().url); // ioredis's default: 20 retries per request
      const inbox = bullmqInbox({ connection: client, name: `client-${process.pid}`, logger: false });
      const runs: string[] = [];
      const worker = await inbox.startWorker(
        createEventRouter().onAny((event) => void runs.push(event.id)),
        { logger: false },
      );
      try {
        await inbox.enqueue(deliveryOf('evt_client'));
        await eventually('the worker ran it', () => runs.length === 1, 5_000);
      } finally {
        await worker.close();
        await inbox.close();
      }
      expect(client.options.maxRetriesPerRequest).toBe(20);
      expect(await client.ping()).toBe('PONG');
      client.disconnect();
    }, 30_000);
  },
  [bullmqEngine],
);

describe('pgBossInbox refuses what it cannot use, at construction', () => {
  it.each<[string, unknown, RegExp]>([
    ['no options', null, /pgBossInbox: takes options/],
    ['neither boss nor connectionString', {}, /give exactly one of boss .* or connectionString/],
    [
      'a misspelt key',
      { connectionString: 'postgres://x', nmae: 'q' },
      /unknown option "nmae"; did you mean "name"\?/,
    ],
    ['a bad name', { connectionString: 'postgres://x', name: 'a b' }, /name must be 1–50 letters/],
    ['a boss that is not one', { boss: {} }, /boss must be a PgBoss from 'pg-boss'/],
    [
      'expireInSeconds 0',
      { connectionString: 'postgres://x', expireInSeconds: 0 },
      /expireInSeconds must be/,
    ],
    [
      'a schema with a dash',
      { connectionString: 'postgres://x', schema: 'pg-boss' },
      /schema must be a plain SQL identifier: .* \(got "pg-boss"\); did you mean "pg_boss"\?/,
    ],
    [
      'a schema holding SQL',
      { connectionString: 'postgres://x', schema: 'pgboss.job; DROP TABLE x; --' },
      /schema must be a plain SQL identifier/,
    ],
    [
      'a schema starting with a digit',
      { connectionString: 'postgres://x', schema: '1boss' },
      /did you mean "_1boss"\?/,
    ],
    ['a schema that is not a string', { connectionString: 'postgres://x', schema: 7 }, /schema must be/],
  ])('%s', (_name, options, message) => {
    expect(() => pgBossInbox(options as PgBossInboxOptions)).toThrow(message);
  });
});

describeWithRedis('an inbox on a Redis that can lose what it acknowledged', () => {
  it('refuses bad worker options before taking a job, and warns once, naming appendonly', async () => {
    const server = await startRedisServer(); // appendonly no
    const logger = captureLogger();
    const inbox: Inbox = bullmqInbox({ connection: server.url, name: 'warned', logger });
    try {
      const router = createEventRouter();
      for (const [options, message] of [
        [{ atempts: 3 }, /unknown option "atempts"; did you mean "attempts"\?/],
        [{ attempts: 0 }, /attempts must be a whole number ≥ 1/],
        [{ concurrency: 1.5 }, /concurrency must be a whole number/],
        [{ backoff: 5 }, /backoff must be \{ delayMs\?, maxDelayMs\? \} or \(attempt\) => ms/],
        [{ backoff: { delay: 5 } }, /unknown option "delay"; did you mean "delayMs"\?/],
        [
          {
            backoff: () => {
              throw new Error('no plan');
            },
          },
          /\[service-webhooks\] inbox\.startWorker: backoff threw for attempt 1 \(no plan\)/,
        ],
        [{ onJob: 'count' }, /onJob must be a function/],
        [
          { idempotency: { stor: new MemoryStore() } },
          /inbox\.startWorker idempotency: unknown option "stor"; did you mean "store"\?/,
        ],
        [{ idempotency: { name: 'shop' } }, /did you mean "scope"\?/],
        [{ idempotency: { store: undefined } }, /idempotency: store is missing \(undefined\)/],
        [{ idempotency: 'redis://x' }, /idempotency must be an IdempotencyStore/],
        [{ idempotency: { scope: 7 } }, /idempotency\.scope must be a string/],
        [
          { entityRetentionMs: 7 * 3_600_000 },
          /entityRetentionMs must be a whole number of milliseconds ≥ 54810000/,
        ],
        [{ maxFutureSkew: 60_000 }, /unknown option "maxFutureSkew"; did you mean "maxFutureSkewMs"\?/],
        [{ maxFutureSkewMs: -1 }, /maxFutureSkewMs must be a number of milliseconds from 0 to 86_400_000/],
        [
          { idempotency: { store: new MemoryStore(), leaseMs: 60_000 } },
          /idempotency\.leaseMs must be longer than timeoutMs/,
        ],
      ] as [unknown, RegExp][])
        await expect(inbox.startWorker(router, options as InboxWorkerOptions)).rejects.toThrow(message);
      await expect(inbox.startWorker({} as never)).rejects.toThrow(/router must come from createEventRouter/);

      const envelope = buildEvent('ag.access_pass.issued');
      const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
      for (const key of ['k1', 'k2']) await inbox.enqueue(queuedDelivery(key, event, () => undefined, null));
      await eventually('the warning', () => logger.messages('warn').length > 0);
      expect(logger.messages('warn')).toEqual([
        expect.stringMatching(
          /^\[service-webhooks\] bullmqInbox: the server's appendonly is no: .* Set appendonly yes/,
        ),
      ]);
    } finally {
      await inbox.close();
      await server.close();
    }
  });
});
