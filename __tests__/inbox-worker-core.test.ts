// The shared worker core: what a try comes to (retry, dead letter), whatever the engine.
import {
  createEventRouter,
  MemoryStore,
  RetryLater,
  type AnyWebhookEvent,
  type IdempotencyStore,
} from '../lib';
import { captureLogger } from './support/capture-logger';
import { pollUntil } from './support/poll-until';
import { inboxWorkerCore } from '../lib/inbox/worker/inbox-worker-core';
import { handledKey } from '../lib/inbox/worker/run-queued-event';
import { eventPosition } from '../lib/core/dispatch/event-position';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery } from '../lib/inbox/queued-delivery';
import { normalizeEvent } from '../lib/events/normalize-event';
import { openTelemetryTracing } from '../lib/observability/open-telemetry-tracing';
import { buildEvent } from '../lib/testing';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { RedisStore } from '../lib/redis';
import { PostgresStore } from '../lib/postgres';
import { describeWithPostgres, startPostgresServer } from './support/postgres-server';
import { describeWithRedis, startRedisServer } from './support/redis-server';

function queued(id: string, time: string) {
  const envelope = buildEvent('ag.access_pass.updated', { id: 'pass-1' }, { id, time });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

describe('inboxWorkerCore: a busy try is put back, never dead-lettered', () => {
  it('an entity held by another job puts the job back without spending its last attempt (no dead letter)', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const ran: string[] = [];
    const router = createEventRouter().on(
      'ag.access_pass.updated',
      async (e: AnyWebhookEvent) => {
        if (e.id === 'b') {
          started();
          await gate;
        }
        ran.push(e.id);
      },
      { ordering: 'newest-wins' },
    );
    const core = inboxWorkerCore(
      router,
      { idempotency: new MemoryStore(), attempts: 2, logger: false, timeoutMs: 10_000 },
      'review',
      openTelemetryTracing,
    );
    const first = core.run(queued('b', '2025-01-01T00:00:01Z'), 1);
    await running;
    // A newer event of the same entity, on its 2nd (= last) try, while b holds the entity.
    const second = await core.run(queued('c', '2025-01-01T00:00:02Z'), 2);
    open();
    await first;
    // No handler failed: the doc of OrderingGuard says busy "put[s] it back for later without
    // counting a failure of the handlers". Dead-lettering it means it is never run automatically.
    expect(second.then).toBe('putBack');
    // It ran no handler: nothing for the engine to write into the job.
    expect(second.handlers).toBeUndefined();
    expect(ran).toEqual(['b']);
  });

  it('a try of an event whose earlier try still holds its claim is put back, not dead-lettered, on the last attempt', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const router = createEventRouter().on('ag.access_pass.updated', async () => {
      started();
      await gate;
    });
    const core = inboxWorkerCore(
      router,
      { idempotency: new MemoryStore(), attempts: 2, logger: false, timeoutMs: 10_000 },
      'review',
      openTelemetryTracing,
    );
    const d = queued('x', '2025-01-01T00:00:01Z');
    const first = core.run(d, 1); // e.g. a stalled job BullMQ re-ran, or a timed-out try still running
    await running;
    const second = await core.run(d, 2);
    open();
    expect(await first).toMatchObject({ then: 'complete' });
    expect(second.then).not.toBe('dead');
  });
});

describe('inboxWorkerCore: the idempotency option, as the receiver takes it', () => {
  it("takes the receiver's { store, scope }: ordered handlers' entities are keyed by that scope", async () => {
    const store = new MemoryStore({ logger: false });
    const ran: string[] = [];
    const router = createEventRouter().on(
      'ag.access_pass.updated',
      (e: AnyWebhookEvent) => void ran.push(e.id),
      { ordering: 'newest-wins' },
    );
    const d = queued('scoped', '2025-01-01T00:00:05Z');
    // Another worker of the 'shop' receiver holds the entity, under the key that receiver uses.
    const raw = JSON.parse(d.envelope) as Record<string, unknown>;
    const event = normalizeEvent(raw as never, raw.data, raw);
    const entity = event.entity!;
    const holder = await store.leaseEntity(
      idempotencyKey('shop', entity.kind, entity.id),
      'another-try',
      60_000,
      eventPosition({ id: 'earlier', time: '2025-01-01T00:00:01Z' })!,
    );
    expect(holder).toBe('leased');
    const options = { logger: false as const, timeoutMs: 10_000 };
    const shop = inboxWorkerCore(
      router,
      { ...options, idempotency: { store, scope: 'shop' } },
      'w',
      openTelemetryTracing,
    );
    expect(await shop.run(d, 1)).toMatchObject({ then: 'putBack' });
    expect(ran).toEqual([]);
    // A worker of the unscoped receiver (a bare store: scope '') is not held by the shop's entity.
    const bare = inboxWorkerCore(router, { ...options, idempotency: store }, 'w', openTelemetryTracing);
    expect(await bare.run(d, 1)).toMatchObject({ then: 'complete', status: 'processed' });
    expect(ran).toEqual(['scoped']);
    store.close();
  });
});

describe("inboxWorkerCore: an entity's newest mark outlives everything the inbox can still run", () => {
  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;
  /** The Service's retry window and its margin: an older event can reach the queue that late. */
  const WINDOW = 7 * HOUR;
  /** The default retention: the window, 13 tries of 10 min, the backoff's 21 810 s between them, 90 days. */
  const DEFAULT_RETENTION = WINDOW + 13 * 600_000 + 21_810_000 + 90 * DAY;

  /**
   * The review's case: `old` fails at try `failed` (its last one by default: a dead letter), `new` of
   * the same pass succeeds, the bug is fixed and, `later` ms on, `old` runs again at try `again` (1: a
   * replayed dead letter). The worker has its defaults but for `options`.
   */
  async function oldRunsAgain(
    later: number,
    {
      failed = 13,
      again = 1,
      ...options
    }: Parameters<typeof inboxWorkerCore>[1] & { failed?: number; again?: number } = {},
  ) {
    let broken = true;
    const written: string[] = [];
    const router = createEventRouter().on(
      'ag.access_pass.updated',
      async (e: AnyWebhookEvent) => {
        if (broken && e.id === 'old') throw new Error('a bug, fixed tomorrow');
        written.push(e.id);
      },
      { ordering: 'newest-wins' },
    );
    const store = new MemoryStore({ logger: false });
    const core = inboxWorkerCore(
      router,
      { idempotency: store, logger: false, ...options },
      'review',
      openTelemetryTracing,
    );
    const realNow = Date.now.bind(Date);
    let shift = 0;
    const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + shift);
    try {
      const first = await core.run(queued('old', '2026-01-01T10:00:00Z'), failed);
      expect(first.then).toBe(failed === (options.attempts ?? 13) ? 'dead' : 'retry');
      expect(await core.run(queued('new', '2026-01-01T10:05:00Z'), 1)).toEqual({
        then: 'complete',
        status: 'processed',
      });
      broken = false;
      shift = later;
      return { then: await core.run(queued('old', '2026-01-01T10:00:00Z'), again), written };
    } finally {
      spy.mockRestore();
      store.close();
    }
  }

  it.each([
    ['the next morning (8 h: past the receiver-side 7 h)', 8 * HOUR],
    ["89 days on (pg-boss's dead letters live 90)", 89 * DAY],
    ['just inside the default retention', DEFAULT_RETENTION - 60_000],
  ])('a dead letter replayed %s is stale: the newer event already succeeded', async (_when, later) => {
    const { then, written } = await oldRunsAgain(later);
    expect(then).toEqual({ then: 'complete', status: 'stale' });
    expect(written).toEqual(['new']);
  });

  it('a retry on the default tries, 8 h on, is stale too (13 tries of 10 min and the backoff outlast 7 h)', async () => {
    const { then, written } = await oldRunsAgain(8 * HOUR, { failed: 1, again: 13 });
    expect(then).toEqual({ then: 'complete', status: 'stale' });
    expect(written).toEqual(['new']);
  });

  it("idempotency.retentionMs (done events) does not shorten the entities' marks", async () => {
    const store = new MemoryStore({ logger: false });
    const { then } = await oldRunsAgain(2 * DAY, { idempotency: { store, retentionMs: 60_000 } });
    expect(then).toEqual({ then: 'complete', status: 'stale' });
  });

  it('beyond the retention the mark is forgotten: the older event runs its ordered handler (as docs/out-of-order-events.md says)', async () => {
    const beyond = await oldRunsAgain(DEFAULT_RETENTION + 60_000);
    expect(beyond.then).toEqual({ then: 'complete', status: 'processed' });
    expect(beyond.written).toEqual(['new', 'old']);
    // entityRetentionMs chooses it: here the least it may be, the window and 1 try of 10 s.
    const short = { attempts: 1, failed: 1, entityRetentionMs: WINDOW + 10_000, timeoutMs: 10_000 };
    expect((await oldRunsAgain(WINDOW + 9_000, short)).then).toMatchObject({ status: 'stale' });
    expect((await oldRunsAgain(WINDOW + 11_000, short)).then).toMatchObject({ status: 'processed' });
  });

  it.each([
    [
      { entityRetentionMs: 0 },
      /entityRetentionMs must be a whole number of milliseconds ≥ 54810000 \(15\.2 h: the Service's retry window and a margin, 7 h, then a job's tries.*\(got 0\)/,
    ],
    [{ entityRetentionMs: 15 * HOUR }, /entityRetentionMs must be .* ≥ 54810000.*\(got 54000000\)/],
    [{ entityRetentionMs: 1.5 * DAY + 0.5 }, /entityRetentionMs must be a whole number/],
    [{ entityRetentionMs: '90d' }, /entityRetentionMs must be a whole number/],
    [
      { attempts: 3, timeoutMs: 1000, backoff: () => 5000, entityRetentionMs: WINDOW + 12_999 },
      /≥ 25213000 /,
    ],
    [{ entityRetention: 1 }, /unknown option "entityRetention"; did you mean "entityRetentionMs"\?/],
    [
      { idempotency: { entityRetentionMs: 90 * DAY } },
      /review idempotency: entityRetentionMs is an option of the worker itself: did you mean startWorker\(router, \{ entityRetentionMs \}\)\?/,
    ],
  ])('refuses %p at construction', (options, message) => {
    const build = () =>
      inboxWorkerCore(
        createEventRouter(),
        { logger: false, ...options } as never,
        'review',
        openTelemetryTracing,
      );
    expect(build).toThrow(message);
    expect(build).toThrow(/^\[service-webhooks\] review/);
  });

  it('takes the window and the exact span of the tries, however the backoff is given', () => {
    const router = createEventRouter();
    for (const options of [
      { attempts: 3, timeoutMs: 1000, backoff: () => 5000, entityRetentionMs: WINDOW + 13_000 },
      {
        attempts: 3,
        timeoutMs: 1000,
        backoff: { delayMs: 100, maxDelayMs: 150 },
        entityRetentionMs: WINDOW + 3_250,
      },
      { attempts: 1, timeoutMs: 1000, entityRetentionMs: WINDOW + 1000 },
    ])
      expect(() =>
        inboxWorkerCore(router, { logger: false, ...options }, 'w', openTelemetryTracing),
      ).not.toThrow();
  });
});

/** Runs one ordered event through a worker on `store` with its defaults, so its entity gets a mark. */
async function markEntity(store: IdempotencyStore) {
  const router = createEventRouter().on('ag.access_pass.updated', () => undefined, {
    ordering: 'newest-wins',
  });
  const core = inboxWorkerCore(router, { idempotency: store, logger: false }, 'w', openTelemetryTracing);
  expect(await core.run(queued('new', '2026-01-01T10:05:00Z'), 1)).toMatchObject({ status: 'processed' });
}

/** 90 days, the retry window (7 h) and the default tries' span (8.2 h), to the minute. */
const DEFAULT_RETENTION_MS = 90 * 86_400_000 + 25_200_000 + 29_610_000;

describeWithRedis("a worker's entity marks in a real Redis", () => {
  it("are kept 90 days past the retry window and the tries by default (the key's TTL)", async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url);
    try {
      await markEntity(new RedisStore({ sendCommand: (command, ...args) => redis.call(command, ...args) }));
      const [key, ...others] = await redis.keys('*entity:*');
      expect(others).toEqual([]);
      const ttl = await redis.pttl(key!);
      expect(ttl).toBeGreaterThan(DEFAULT_RETENTION_MS - 60_000);
      expect(ttl).toBeLessThanOrEqual(DEFAULT_RETENTION_MS);
    } finally {
      redis.disconnect();
      await server.close();
    }
  });
});

describeWithPostgres("a worker's entity marks in a real PostgreSQL", () => {
  it('are kept 90 days past the retry window and the tries by default (expires_at)', async () => {
    const server = await startPostgresServer();
    const pool = new Pool({ connectionString: server.url });
    pool.on('error', () => undefined); // an idle connection cut at shutdown is not a failure
    try {
      const store = new PostgresStore({ pool, table: 'marks' });
      await store.setup();
      await markEntity(store);
      const { rows } = await pool.query<{ ms: number }>(
        'SELECT extract(epoch FROM expires_at - now()) * 1000 AS ms FROM marks_entities',
      );
      expect(rows).toHaveLength(1);
      expect(Number(rows[0]!.ms)).toBeGreaterThan(DEFAULT_RETENTION_MS - 60_000);
      expect(Number(rows[0]!.ms)).toBeLessThanOrEqual(DEFAULT_RETENTION_MS);
    } finally {
      await pool.end();
      await server.close();
    }
  }, 60_000);
});

describe('inboxWorkerCore: what a failed try says, and what a try that ran before does', () => {
  const failing = (error: () => Error) =>
    createEventRouter().on('ag.access_pass.updated', () => {
      throw error();
    });

  it.each([
    {
      name: 'an error, attempts left',
      error: () => new Error('down'),
      attempt: 1,
      said: 'a handler failed; the queue tries the event again in 2 s (attempt 2 of 3)',
    },
    {
      name: "RetryLater's own delay",
      error: () => new RetryLater('busy', { retryAfterSeconds: 7 }),
      attempt: 2,
      said: 'a handler failed; the queue tries the event again in 7 s (attempt 3 of 3)',
    },
    {
      name: 'the last attempt',
      error: () => new Error('down'),
      attempt: 3,
      said: 'a handler failed; attempt 3 of 3 was the last: the event goes to the dead letters',
    },
  ])(
    'logs what the queue does next, never an answer to the Service: $name',
    async ({ error, attempt, said }) => {
      const logger = captureLogger();
      const core = inboxWorkerCore(
        failing(error),
        { attempts: 3, backoff: { delayMs: 2000 }, idempotency: false, logger },
        'w',
        openTelemetryTracing,
      );
      const next = await core.run(queued(`said-${attempt}`, '2026-01-01T10:00:00Z'), attempt);
      expect(next.then).toBe(attempt === 3 ? 'dead' : 'retry');
      expect(logger.messages('error')).toContain(`[service-webhooks] ${said}`);
      expect(logger.messages('error').join('\n')).not.toMatch(/answering|Service retries/);
    },
  );

  it('runs nothing for an event whose handlers succeeded in an earlier try: a duplicate, completed', async () => {
    const store = new MemoryStore({ logger: false });
    const ran: string[] = [];
    const router = createEventRouter().on(
      'ag.access_pass.updated',
      (e: AnyWebhookEvent) => void ran.push(e.id),
    );
    const core = inboxWorkerCore(router, { idempotency: store, logger: false }, 'w', openTelemetryTracing);
    const d = queued('ran-before', '2026-01-01T10:00:00Z');
    expect(await core.run(d, 1)).toEqual({ then: 'complete', status: 'processed' });
    // The job runs again (its worker was killed before the queue heard): the ledger says done.
    expect(await core.run(d, 2)).toEqual({ then: 'complete', status: 'duplicate' });
    expect(ran).toEqual(['ran-before']);
  });

  it('aborts ctx.signal when the try times out, and the try fails saying so', async () => {
    let signal: AbortSignal | undefined;
    const router = createEventRouter().on('ag.access_pass.updated', async (_e, ctx) => {
      signal = ctx.signal;
      // Stops when asked: the abort is what ends it.
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    });
    const core = inboxWorkerCore(
      router,
      { timeoutMs: 100, attempts: 2, idempotency: false, logger: false },
      'w',
      openTelemetryTracing,
    );
    const next = await core.run(queued('timed-out', '2026-01-01T10:00:00Z'), 1);
    expect(next).toMatchObject({ then: 'retry', error: 'Error: the handlers ran past 100 ms' });
    expect(signal?.aborted).toBe(true);
    expect(String((signal?.reason as Error | undefined)?.message)).toBe('the job timed out');
  });
});

describe('inboxWorkerCore: a try keeps its claim while its handlers run', () => {
  it('renews the lease past the timeout while a handler ignoring ctx.signal runs, so the next try is put back', async () => {
    // On the fake clock (Date and performance.now() too): the store's leases, the renewals' interval
    // and the try's timeout all read it, so the first lease runs out at exactly 1 500 ms, however
    // busy the machine.
    jest.useFakeTimers();
    try {
      const store = new MemoryStore({ logger: false });
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      let starts = 0;
      const router = createEventRouter().on('ag.access_pass.updated', async () => {
        starts++;
        await finished;
      });
      const core = inboxWorkerCore(
        router,
        { timeoutMs: 100, attempts: 3, idempotency: { store, leaseMs: 1500 }, logger: false },
        'w',
        openTelemetryTracing,
      );
      const d = queued('overrun', '2026-01-01T10:00:00Z');
      const first = core.run(d, 1);
      await jest.advanceTimersByTimeAsync(100);
      expect(await first).toMatchObject({ then: 'retry' });
      // Past the first lease (renewals go on up to timeoutMs + leaseMs, each for a lease) the handler
      // still runs: its claim was renewed, so no second start.
      await jest.advanceTimersByTimeAsync(1800);
      const second = core.run(d, 2);
      // A second start would run to its own timeout: the clock moves on for it, so it ends either way.
      await jest.advanceTimersByTimeAsync(100);
      expect(await second).toMatchObject({ then: 'putBack' });
      expect(starts).toBe(1);
      finish();
      for (let i = 0; i < 100 && (await store.get(handledKey(d.key))) !== 'done'; i++)
        await jest.advanceTimersByTimeAsync(10);
      expect(await store.get(handledKey(d.key))).toBe('done');
      expect(await core.run(d, 2)).toEqual({ then: 'complete', status: 'duplicate' });
      expect(starts).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

  it('warns once at start when the store cannot renew a lease, saying what to give it', () => {
    const logger = captureLogger();
    const bare = new MemoryStore({ logger: false });
    const store: IdempotencyStore = {
      claim: (...a) => bare.claim(...a),
      markDone: (...a) => bare.markDone(...a),
      release: (...a) => bare.release(...a),
      get: (...a) => bare.get(...a),
    };
    inboxWorkerCore(
      createEventRouter(),
      { idempotency: store, logger },
      'inbox.startWorker',
      openTelemetryTracing,
    );
    expect(logger.messages('warn')).toEqual([
      expect.stringMatching(
        /^\[service-webhooks\] inbox\.startWorker: the idempotency store has no renewLease.*may be started again.*Give the store renewLease\(key, token, leaseMs\)/,
      ),
    ]);
    const quiet = captureLogger();
    inboxWorkerCore(createEventRouter(), { idempotency: bare, logger: quiet }, 'w', openTelemetryTracing);
    expect(quiet.messages('warn')).toEqual([]);
  });

  it('warns once at start when ordered handlers meet a store that cannot renew an entity lease', () => {
    const bare = new MemoryStore({ logger: false });
    const { renewEntity: _renewEntity, ...rest } = Object.fromEntries(
      [
        'claim',
        'markDone',
        'release',
        'get',
        'renewLease',
        'leaseEntity',
        'advanceEntity',
        'releaseEntity',
        'renewEntity',
      ].map((m) => [m, (bare as unknown as Record<string, (...a: unknown[]) => unknown>)[m]!.bind(bare)]),
    );
    const ordered = createEventRouter().on('ag.access_pass.updated', () => undefined, {
      ordering: 'newest-wins',
    });
    const logger = captureLogger();
    inboxWorkerCore(
      ordered,
      { idempotency: rest as unknown as IdempotencyStore, logger },
      'inbox.startWorker',
      openTelemetryTracing,
    );
    expect(logger.messages('warn')).toEqual([
      expect.stringMatching(
        /^\[service-webhooks\] inbox\.startWorker: the idempotency store has no renewEntity.*Give the store renewEntity\(key, token, leaseMs\)/,
      ),
    ]);
    const quiet = captureLogger();
    inboxWorkerCore(ordered, { idempotency: bare, logger: quiet }, 'w', openTelemetryTracing);
    inboxWorkerCore(
      createEventRouter(),
      { idempotency: rest as unknown as IdempotencyStore, logger: quiet },
      'w',
      openTelemetryTracing,
    );
    expect(quiet.messages('warn')).toEqual([]);
  });
});

describe("inboxWorkerCore: onJob.onBookkeeping, told what the worker's store did", () => {
  /** A MemoryStore whose first markDone fails: the worker's background retry records it. */
  function markDoneFailingOnce(): IdempotencyStore {
    const store = new MemoryStore();
    let failed = false;
    return {
      claim: (...args) => store.claim(...args),
      release: (...args) => store.release(...args),
      get: (key) => store.get(key),
      markDone: (...args) =>
        failed ? store.markDone(...args) : ((failed = true), Promise.reject(new Error('connection reset'))),
    };
  }
  const router = () => createEventRouter().on('ag.access_pass.updated', () => undefined);

  it('tells it of a markDone its background retry recovered, beside the try it reports', async () => {
    const told: string[] = [];
    const onJob = Object.assign((record: { outcome: string }) => void told.push(`job ${record.outcome}`), {
      onBookkeeping: (event: string) => void told.push(event),
    });
    const core = inboxWorkerCore(
      router(),
      { idempotency: markDoneFailingOnce(), logger: false, onJob },
      'review',
      openTelemetryTracing,
    );
    expect(await core.run(queued('evt_bookkept', '2025-01-01T00:00:01Z'), 1)).toMatchObject({
      then: 'complete',
    });
    await pollUntil('the retry recovered', () => told.includes('mark-done-recovered'), { timeoutMs: 20_000 });
    expect(told).toEqual(['job processed', 'mark-done-recovered']);
  });

  it('tells it of a markDone the store refused (its lease taken over) as lease-lost', async () => {
    const store = new MemoryStore();
    const refusing: IdempotencyStore = {
      claim: (...args) => store.claim(...args),
      release: (...args) => store.release(...args),
      get: (key) => store.get(key),
      markDone: () => Promise.resolve(false),
    };
    const told: string[] = [];
    const onJob = Object.assign(() => undefined, { onBookkeeping: (event: string) => void told.push(event) });
    const core = inboxWorkerCore(
      router(),
      { idempotency: refusing, logger: false, onJob },
      'review',
      openTelemetryTracing,
    );
    await core.run(queued('evt_refused', '2025-01-01T00:00:01Z'), 1);
    expect(told).toEqual(['lease-lost']);
  });

  it("tells it of an ordered entity's event dated past its receipt as future-time, as the try's record says", async () => {
    const told: string[] = [];
    const records: { futureTime?: boolean }[] = [];
    const onJob = Object.assign((record: { futureTime?: boolean }) => void records.push(record), {
      onBookkeeping: (event: string) => void told.push(event),
    });
    const ordered = createEventRouter().on('ag.access_pass.updated', () => undefined, {
      ordering: 'newest-wins',
    });
    const core = inboxWorkerCore(
      ordered,
      { idempotency: new MemoryStore(), logger: false, onJob },
      'review',
      openTelemetryTracing,
    );
    await core.run(queued('evt_from_9999', '9999-01-01T00:00:00Z'), 1);
    expect([told, records.map((r) => r.futureTime)]).toEqual([['future-time'], [true]]);
  });

  it('logs what onBookkeeping throws, and the job is not affected', async () => {
    const logger = captureLogger();
    const onJob = Object.assign(() => undefined, {
      onBookkeeping: () => {
        throw new Error('a broken counter');
      },
    });
    const core = inboxWorkerCore(
      router(),
      { idempotency: markDoneFailingOnce(), logger, onJob },
      'review',
      openTelemetryTracing,
    );
    expect(await core.run(queued('evt_bookkept_throws', '2025-01-01T00:00:01Z'), 1)).toMatchObject({
      then: 'complete',
    });
    await pollUntil(
      'the throw logged',
      () =>
        logger
          .messages('error')
          .some((m) => m.endsWith('onJob.onBookkeeping threw; the job was not affected')),
      { timeoutMs: 20_000 },
    );
  });

  it.each([
    ['a string', 'count it'],
    ['a number', 1],
  ])('refuses an onBookkeeping that is %s, at construction', (_what, onBookkeeping) => {
    const onJob = Object.assign(() => undefined, { onBookkeeping });
    expect(() =>
      inboxWorkerCore(router(), { logger: false, onJob } as never, 'review', openTelemetryTracing),
    ).toThrow(/\[service-webhooks\] review: onJob\.onBookkeeping must be a function, or absent/);
  });
});
