// pg-boss's own inbox faults, beyond the contract every engine keeps (inbox-contract.test.ts).
import { createEventRouter, MemoryStore, type Inbox } from '../lib';
import { handledKey } from '../lib/inbox/worker/run-queued-event';
import { jobIdFor } from '../lib/inbox/queued-delivery';
import { loadPgBoss, type PgBoss, type PgBossJob } from '../lib/pg-boss/load-pg-boss';
import { gate } from './support/gate';
import { normalizeEvent } from '../lib/events/normalize-event';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery, type QueuedDelivery } from '../lib/inbox/queued-delivery';

import { pgBossInbox } from '../lib/pg-boss';
import { buildEvent } from '../lib/testing';
import { captureLogger } from './support/capture-logger';
import { eventually } from './support/inbox-engines';
import { describeWithPostgres, startPostgresServer, type PostgresServer } from './support/postgres-server';
import { startSlowLink } from './support/slow-link';

/** The delivery a receiver queues for event `id`. */
function queued(id: string): QueuedDelivery {
  const envelope = buildEvent('ag.access_pass.issued', {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

describeWithPostgres('pgBossInbox on PostgreSQL', () => {
  let server: PostgresServer;
  const opened: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    server = await startPostgresServer();
  }, 60_000);
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });
  afterAll(async () => {
    await server?.close();
  });
  const open = (name: string, url = server.url): Inbox => {
    const inbox = pgBossInbox({ connectionString: url, name });
    opened.push(inbox);
    return inbox;
  };

  it('replays 200 dead letters over a slow link while workers fail them again: each event ends dead once, none lost', async () => {
    const name = `replay-race-${process.pid}`;
    const inbox = open(name);
    const runs = new Map<string, number>();
    const router = createEventRouter().onAny((event) => {
      runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
      throw new Error('the CRM is still down');
    });
    opened.push(await inbox.startWorker(router, { attempts: 1, concurrency: 8, logger: false }));
    const ids = Array.from({ length: 200 }, (_, i) => `evt-${String(i).padStart(3, '0')}`);
    for (const id of ids) await inbox.enqueue(queued(id));
    await eventually('200 dead letters', async () => (await inbox.status()).dead === 200, 60_000);

    // The replay runs as a CLI over a remote link would: each round trip 40 ms longer.
    const link = await startSlowLink(server.url, 20);
    opened.push(link);
    expect(await open(name, link.url).replay({})).toBe(200);
    await eventually(
      'every replayed event ran again and the queue is empty',
      async () => {
        const status = await inbox.status();
        return ids.every((id) => runs.get(id) === 2) && status.waiting === 0 && status.active === 0;
      },
      60_000,
    );
    const dead = await inbox.deadLetters({ limit: 1000 });
    expect(dead.map((d) => d.delivery.id).sort()).toEqual(ids);
    expect(await inbox.status()).toMatchObject({ waiting: 0, active: 0, dead: 200 });
    // Each is still refused a redelivery, and replays again.
    await inbox.enqueue(queued('evt-007'));
    expect((await inbox.status()).waiting).toBe(0);
    expect(ids.every((id) => runs.get(id) === 2)).toBe(true);
  }, 180_000);

  it("logs the errors pg-boss reports (its database gone), at most one line a minute, to the inbox's logger", async () => {
    const logger = captureLogger();
    const inbox = pgBossInbox({ connectionString: server.url, name: `logged-${process.pid}`, logger });
    opened.push(inbox);
    await inbox.status();
    await server.stop();
    try {
      await expect(inbox.status()).rejects.toThrow();
      await eventually('an error logged', () => logger.records.length > 0, 30_000);
    } finally {
      await server.start();
    }
    expect(logger.records).toEqual([
      {
        level: 'error',
        message: '[service-webhooks] pg-boss reported an error; it keeps trying (check the database)',
        meta: expect.objectContaining({ reason: 'pg-boss-error', err: expect.any(Error) }),
      },
    ]);
    expect(await inbox.status()).toMatchObject({ waiting: 0 });
  }, 60_000);

  it('the worker logs the first fetch error of each reason, counts the rest, and says once when it is connected again (issue 29 item 6)', async () => {
    const inbox = pgBossInbox({ connectionString: server.url, name: `away-${process.pid}`, logger: false });
    opened.push(inbox);
    const logger = captureLogger();
    const worker = await inbox.startWorker(createEventRouter(), {
      idempotency: false,
      logger,
      concurrency: 4,
    });
    opened.push(worker);
    const errors = () => logger.records.filter((r) => r.level === 'error');
    await server.stop();
    try {
      await eventually('a first error line', () => errors().length > 0, 30_000);
      // Four loops each ask four times a second while the database is away.
      await new Promise((resolve) => setTimeout(resolve, 3000));
    } finally {
      await server.start();
    }
    await eventually('the connection back', () => logger.messages('warn').length > 0, 30_000);
    const reasons = errors().map((r) => r.meta.reason);
    expect(new Set(reasons).size).toBe(reasons.length);
    for (const line of errors())
      expect(line.message).toMatch(
        /^\[service-webhooks\] the pg-boss worker reported an error and keeps retrying/,
      );
    const back = logger.records.filter((r) => r.level === 'warn');
    expect(back.map((r) => r.message)).toEqual(['[service-webhooks] the pg-boss worker is connected again']);
    expect(back[0]?.meta.errors).toBeGreaterThan(reasons.length);
    // Back at work, and no second line for it.
    await inbox.enqueue(queued('evt_after_outage'));
    await eventually('the queue ran again', async () => (await inbox.status()).waiting === 0, 30_000);
    expect(logger.messages('warn')).toHaveLength(1);
  }, 90_000);

  /** How a row's worker meets its event: what the handler does, what holds the event, which settle is held. */
  interface StaleRow {
    name: string;
    /** The handler throws on these runs (1-based). */
    throwsOn: number[];
    attempts: number;
    /** Another try holds the event from the start. */
    busyFromStart: boolean;
    /** Another try takes the event after the worker's first settle. */
    busyAfterFirst: boolean;
    /** The worker's settle call that is held until another try has the job (1-based). */
    heldAt: number;
  }
  const STALE: StaleRow[] = [
    { name: 'a success', throwsOn: [], attempts: 3, busyFromStart: false, busyAfterFirst: false, heldAt: 1 },
    {
      name: 'a failure, tried again',
      throwsOn: [1],
      attempts: 3,
      busyFromStart: false,
      busyAfterFirst: false,
      heldAt: 1,
    },
    {
      name: 'the last failure, dead-lettered',
      throwsOn: [1],
      attempts: 1,
      busyFromStart: false,
      busyAfterFirst: false,
      heldAt: 1,
    },
    {
      name: 'a busy first try, put back',
      throwsOn: [],
      attempts: 3,
      busyFromStart: true,
      busyAfterFirst: false,
      heldAt: 1,
    },
    {
      name: 'a busy try after a failure, put back',
      throwsOn: [1],
      attempts: 3,
      busyFromStart: false,
      busyAfterFirst: true,
      heldAt: 2,
    },
    {
      name: 'a busy try after a put-back, put back',
      throwsOn: [],
      attempts: 3,
      busyFromStart: true,
      busyAfterFirst: false,
      heldAt: 2,
    },
  ];

  it.each(STALE)(
    'settles nothing for $name once its claim lapsed and another try holds the job',
    async (row) => {
      const name = `stale-${STALE.indexOf(row)}-${process.pid}`;
      const boss = new (loadPgBoss().PgBoss)({ connectionString: server.url });
      boss.on('error', () => undefined);
      await boss.start();
      opened.push({ close: () => boss.stop({ graceful: false, timeout: 5000 }) });
      const delivery = queued(`evt-stale-${STALE.indexOf(row)}`);
      const store = new MemoryStore();
      const holdEvent = async (token: string) =>
        expect(await store.claim(handledKey(delivery.key), token, 60_000)).toBe('claimed');
      if (row.busyFromStart) await holdEvent('another-try');
      // The worker's settle calls (complete, fail, cancel) on the queue, counted; the held one waits.
      const reached = gate(`settle call ${row.heldAt}`, 20_000);
      const release = gate('another try has the job', 20_000);
      const settled = gate('the held settle call returned', 20_000);
      let calls = 0;
      const gated = new Proxy(boss, {
        get(target, property) {
          const value: unknown = Reflect.get(target, property, target);
          if (typeof value !== 'function') return value;
          const call = (value as (...a: unknown[]) => Promise<unknown>).bind(target);
          if (!['complete', 'fail', 'cancel'].includes(String(property))) return call;
          return async (...args: unknown[]) => {
            if (args[0] !== name) return call(...args);
            const n = ++calls;
            if (n === 1 && row.busyAfterFirst) await holdEvent('another-try');
            if (n !== row.heldAt) return call(...args);
            reached.open();
            await release.opened;
            try {
              return await call(...args);
            } finally {
              settled.open();
            }
          };
        },
      }) as PgBoss;
      const inbox = pgBossInbox({ boss: gated, name, logger: false });
      opened.push(inbox);
      let runs = 0;
      const router = createEventRouter().onAny(() => {
        if (row.throwsOn.includes(++runs)) throw new Error('the CRM is down');
      });
      opened.push(
        await inbox.startWorker(router, {
          attempts: row.attempts,
          backoff: { delayMs: 10 },
          timeoutMs: 100,
          idempotency: { store, leaseMs: 1000 },
          logger: false,
        }),
      );
      await inbox.enqueue(delivery);
      await reached.opened;
      // The held try's claim lapses (as pg-boss's expiry does) and another worker claims the job.
      const id = jobIdFor(delivery.key);
      await boss.fail(name, id, { error: 'expired' });
      const [taken] = await boss.fetch<unknown>(name, { includeMetadata: true, ignoreStartAfter: true });
      expect(taken?.id).toBe(id);
      release.open();
      await settled.opened;
      const [job] = await boss.findJobs<unknown>(name, { id });
      expect(job).toMatchObject({ state: 'active', retryCount: (taken as PgBossJob).retryCount });
    },
    60_000,
  );
});
