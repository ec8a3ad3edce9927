// Dead letters are read and replayed a page at a time on both engines (pg-boss's filtered, ordered
// and limited by PostgreSQL): however many there are, no read brings back more than a page, and a
// replay holds one page at a time. What deadLetters() and replay() are given is checked alike.
import { normalizeEvent } from '../lib/events/normalize-event';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery } from '../lib/inbox/queued-delivery';
import { pgBossInbox } from '../lib/pg-boss';
import type { DeadLetterData } from '../lib/pg-boss/dead-letter-data';
import { loadPgBoss, type PgBoss } from '../lib/pg-boss/load-pg-boss';
import { REPLAY_BATCH } from '../lib/pg-boss/pg-boss-inbox';
import { buildEvent } from '../lib/testing';
import { Queue, Worker } from 'bullmq';
import { createEventRouter, type Inbox } from '../lib';
import { bullmqInbox } from '../lib/bullmq';
import { PAGE } from '../lib/bullmq/bullmq-dead-letters';
import { countingBoss } from './support/counting-boss';
import { describeEachEngine } from './support/describe-each-engine';
import { bullmqEngine, eventually, pgBossEngine } from './support/inbox-engines';

const NAME = `dead-${process.pid}`;
const DEAD = `${NAME}.dead`;
const BASE = Date.parse('2026-11-20T00:00:00.000Z');

/** A dead letter of event `id` that failed `seconds` after BASE, as the worker writes it. */
function deadLetter(
  id: string,
  type: 'ag.access_pass.issued' | 'ag.hid_org.created',
  seconds: number,
): DeadLetterData {
  const envelope = buildEvent(type, {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return {
    delivery: queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null),
    attempts: 13,
    lastError: 'Error: the CRM is down',
    failedAt: new Date(BASE + seconds * 1000).toISOString(),
  };
}

describeEachEngine(
  'dead letters read by PostgreSQL on $name',
  (_engine, server) => {
    let boss: PgBoss;
    const reads: number[] = [];
    let inbox: ReturnType<typeof pgBossInbox>;
    beforeAll(async () => {
      boss = new (loadPgBoss().PgBoss)({ connectionString: server().url });
      boss.on('error', () => undefined);
      await boss.start();
      inbox = pgBossInbox({ boss: countingBoss(boss, DEAD, (rows) => void reads.push(rows)), name: NAME });
      await inbox.status(); // makes both queues
      // 250 of one type failing a second apart, 50 of another between them: 300 in all.
      const jobs = [
        ...Array.from({ length: 250 }, (_, i) => deadLetter(`a-${i}`, 'ag.access_pass.issued', i)),
        ...Array.from({ length: 50 }, (_, i) => deadLetter(`b-${i}`, 'ag.hid_org.created', i + 0.5)),
      ];
      await boss.insert(
        DEAD,
        jobs.map((data) => ({ data, retentionSeconds: 3600 })),
      );
    }, 60_000);
    afterAll(async () => {
      await inbox?.close();
      await boss?.stop({ graceful: false, timeout: 5000 });
    });
    beforeEach(() => void (reads.length = 0));

    it('reads no more rows than the limit: the newest failures of the type, newest first', async () => {
      const three = await inbox.deadLetters({ limit: 3, type: 'ag.hid_org.created' });
      expect(three.map((d) => d.delivery.id)).toEqual(['b-49', 'b-48', 'b-47']);
      expect(three[0]).toMatchObject({
        attempts: 13,
        lastError: 'Error: the CRM is down',
        failedAt: new Date(BASE + 49_500),
      });
      const page = await inbox.deadLetters();
      expect(page.map((d) => d.delivery.id).slice(0, 3)).toEqual(['a-249', 'a-248', 'a-247']);
      expect(page).toHaveLength(100);
      expect(reads).toEqual([3, 100]);
    });

    it('binds the filters as parameters: a type holding SQL matches nothing', async () => {
      const hostile = "ag.hid_org.created' OR '1'='1";
      expect(await inbox.deadLetters({ type: hostile })).toEqual([]);
      expect(await inbox.replay({ type: hostile })).toBe(0);
      expect((await inbox.status()).dead).toBe(300);
    });

    it('replays by type and failure time a page at a time, exactly the matching ones', async () => {
      const replayed = await inbox.replay({
        type: 'ag.access_pass.issued',
        since: new Date(BASE + 100_000),
      });
      expect(replayed).toBe(150);
      // Pages of REPLAY_BATCH, never every dead letter at once.
      expect(reads.length).toBeGreaterThanOrEqual(Math.ceil(150 / REPLAY_BATCH));
      expect(Math.max(...reads)).toBeLessThanOrEqual(REPLAY_BATCH);
      const left = await inbox.deadLetters({ type: 'ag.access_pass.issued', limit: 1000 });
      expect(left.map((d) => d.delivery.id)).toEqual(Array.from({ length: 100 }, (_, i) => `a-${99 - i}`));
      expect(await inbox.status()).toMatchObject({ waiting: 150, dead: 150 });
      expect(await inbox.replay('b-7')).toBe(1);
      expect(await inbox.replay('b-7')).toBe(0);
      expect((await inbox.status()).dead).toBe(149);
    });
  },
  [pgBossEngine],
);

describeEachEngine(
  'failed jobs replayed a page at a time on $name',
  (_engine, server) => {
    const name = `paged-${process.pid}`;
    let queue: Queue;
    let inbox: Inbox;
    beforeAll(async () => {
      queue = new Queue(name, { connection: { url: server().url } });
      inbox = bullmqInbox({ queue, logger: false });
      // More than two pages of failed jobs: 2 of every 3 of the type replayed, the others between them.
      const count = 2 * PAGE + 200;
      await queue.addBulk(
        Array.from({ length: count }, (_, i) => {
          const data = deadLetter(`j-${i}`, i % 3 === 2 ? 'ag.hid_org.created' : 'ag.access_pass.issued', i);
          return { name: data.delivery.type, data: data.delivery, opts: { jobId: `j-${i}` } };
        }),
      );
      const failing = new Worker(
        name,
        () => {
          throw new Error('the CRM is down');
        },
        { connection: { url: server().url }, concurrency: 50 },
      );
      failing.on('error', () => undefined);
      try {
        await eventually('every job failed', async () => (await queue.getFailedCount()) === count, 60_000);
      } finally {
        await failing.close();
      }
    }, 90_000);
    afterAll(async () => {
      await inbox?.close();
      await queue?.close();
    });

    it('stops a since walk at the first page that reaches older failures (the set is newest first)', async () => {
      const spy = jest.spyOn(queue, 'getFailed');
      try {
        expect(await inbox.replay({ since: new Date(Date.now() + 60_000) })).toBe(0);
        expect(spy).toHaveBeenCalledTimes(1);
      } finally {
        spy.mockRestore();
      }
    });

    it('replays every matching failed job across pages, never reading the next page before replaying the last', async () => {
      const reads: { rows: number; replayedBefore: number }[] = [];
      const getFailed = queue.getFailed.bind(queue);
      const spy = jest.spyOn(queue, 'getFailed').mockImplementation(async (start, end) => {
        const replayedBefore = await queue.getWaitingCount();
        const page = await getFailed(start, end);
        reads.push({ rows: page.length, replayedBefore });
        return page;
      });
      try {
        expect(await inbox.replay({ type: 'ag.access_pass.issued' })).toBe(800);
      } finally {
        spy.mockRestore();
      }
      expect(Math.max(...reads.map((r) => r.rows))).toBeLessThanOrEqual(PAGE);
      // Each page is replayed before the next is read: memory holds one page, however many match.
      expect(reads.length).toBeGreaterThanOrEqual(3);
      expect(reads.map((r) => r.replayedBefore)).toEqual(
        [...reads.map((r) => r.replayedBefore)].sort((a, b) => a - b),
      );
      expect(reads[1]!.replayedBefore).toBeGreaterThan(0);
      expect(reads.at(-1)!.replayedBefore).toBeGreaterThan(PAGE);
      const left = await inbox.deadLetters({ limit: 1000 });
      expect(left).toHaveLength(400);
      expect(left.every((d) => d.delivery.type === 'ag.hid_org.created')).toBe(true);
      expect(await queue.getWaitingCount()).toBe(800);
      expect(await inbox.replay({ type: 'ag.access_pass.issued' })).toBe(0);
    });
  },
  [bullmqEngine],
);

describeEachEngine('deadLetters() and replay() check what they are given on $name', (_engine, server) => {
  let inbox: Inbox;
  beforeAll(async () => {
    inbox = server().inbox(`checked-${process.pid}`);
    const envelope = buildEvent('ag.access_pass.issued', {}, { id: 'evt_kept' });
    const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
    await inbox.enqueue(
      queuedDelivery(idempotencyKey('', event.source, 'evt_kept'), event, () => undefined, null),
    );
    const router = createEventRouter().onAny(() => {
      throw new Error('the CRM is down');
    });
    const worker = await inbox.startWorker(router, { attempts: 1, logger: false });
    try {
      await eventually('a dead letter', async () => (await inbox.status()).dead === 1);
    } finally {
      await worker.close();
    }
  }, 60_000);
  afterAll(() => inbox?.close());

  const LIMIT =
    /^\[service-webhooks\] inbox\.deadLetters: limit must be a whole number from 1 to 100000 \(got /;
  it.each([
    [{ limit: 0 }, LIMIT],
    [{ limit: 2.5 }, LIMIT],
    [{ limit: -1 }, LIMIT],
    [{ limit: '5' }, LIMIT],
    [{ limit: 100_001 }, LIMIT],
    [{ limit: Number.NaN }, LIMIT],
    [{ type: 5 }, /^\[service-webhooks\] inbox\.deadLetters: type must be a non-empty event type/],
    [{ type: '' }, /inbox\.deadLetters: type must be a non-empty event type/],
    [{ limt: 5 }, /inbox\.deadLetters: unknown option "limt"; did you mean "limit"\?/],
    ['evt_kept', /inbox\.deadLetters: takes \{ limit\?, type\?, handler\?, after\?, before\? \} or nothing/],
    [{ handler: '' }, /inbox\.deadLetters: handler must be a handler's name, a non-empty string/],
    [{ handler: ['crm'] }, /inbox\.deadLetters: handler must be a handler's name/],
    [{ handlers: 'crm' }, /inbox\.deadLetters: unknown option "handlers"; did you mean "handler"\?/],
  ])('deadLetters(%p) is refused, with the same error on every engine', async (options, message) => {
    await expect(inbox.deadLetters(options as never)).rejects.toThrow(message);
  });

  it.each([
    [undefined, /^\[service-webhooks\] inbox\.replay: takes an event id or \{ type\?, since\?, issue\? \}/],
    ['', /inbox\.replay: takes an event id/],
    [5, /inbox\.replay: takes an event id/],
    [new Date(), /inbox\.replay: takes an event id/],
    [['evt_kept'], /inbox\.replay: takes an event id/],
    [{ typ: 'ag.access_pass.issued' }, /inbox\.replay: unknown option "typ"; did you mean "type"\?/],
    [{ type: 7 }, /inbox\.replay: type must be a non-empty event type/],
    [{ since: '1h' }, /inbox\.replay: since must be a valid Date \(got 1h\)/],
    [{ since: new Date('yesterday') }, /inbox\.replay: since must be a valid Date \(got Invalid Date\)/],
  ])(
    'replay(%p) is refused, with the same error on every engine, and replays nothing',
    async (target, message) => {
      await expect(inbox.replay(target as never)).rejects.toThrow(message);
      expect((await inbox.status()).dead).toBe(1);
    },
  );

  it.each([
    [
      {},
      { handlers: ['crm'] },
      /^\[service-webhooks\] inbox\.replay: handlers replays one event: give its id/,
    ],
    ['evt_kept', { handlers: [] }, /inbox\.replay: handlers must be a non-empty list of handler names/],
    ['evt_kept', { handlers: 'crm' }, /inbox\.replay: handlers must be a non-empty list/],
    ['evt_kept', { handlers: [''] }, /inbox\.replay: each of handlers must be a handler's name/],
    ['evt_kept', { handler: ['crm'] }, /inbox\.replay: unknown option "handler"; did you mean "handlers"\?/],
    [
      'evt_kept',
      'crm',
      /inbox\.replay: takes \{ signal\?, onProgress\?, dryRun\?, handlers\? \} as its second argument/,
    ],
  ])(
    'replay(%p, %p) is refused, with the same error on every engine, and replays nothing',
    async (target, options, message) => {
      await expect(inbox.replay(target as never, options as never)).rejects.toThrow(message);
      expect((await inbox.status()).dead).toBe(1);
    },
  );

  it('takes the bounds themselves', async () => {
    expect(await inbox.deadLetters({ limit: 1 })).toHaveLength(1);
    expect(await inbox.deadLetters({ limit: 100_000, type: 'ag.access_pass.issued' })).toHaveLength(1);
    expect(await inbox.deadLetters()).toHaveLength(1);
    expect(await inbox.replay({ since: new Date(Date.now() + 60_000) })).toBe(0);
  });
});
