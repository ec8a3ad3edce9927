import { createEventRouter, MemoryStore, type Inbox, type InboxWorkerOptions } from '../lib';
import { bullmqInbox, type BullmqInboxOptions } from '../lib/bullmq';
import { pgBossInbox, type PgBossInboxOptions } from '../lib/pg-boss';
import { captureLogger } from './support/capture-logger';
import { buildEvent } from '../lib/testing';
import { normalizeEvent } from '../lib/events/normalize-event';
import { queuedDelivery } from '../lib/inbox/queued-delivery';
import { describeWithRedis, startRedisServer } from './support/redis-server';
import { eventually } from './support/inbox-engines';

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
  ])('%s', (_name, options, message) => {
    expect(() => bullmqInbox(options as BullmqInboxOptions)).toThrow(message);
  });
});

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
