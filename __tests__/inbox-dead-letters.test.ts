// pg-boss's dead letters are filtered, ordered and limited by PostgreSQL, and replayed a page at a
// time: however many there are, no read brings back more rows than asked for.
import { normalizeEvent } from '../lib/events/normalize-event';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery } from '../lib/inbox/queued-delivery';
import { pgBossInbox } from '../lib/pg-boss';
import type { DeadLetterData } from '../lib/pg-boss/dead-letter-data';
import { loadPgBoss, type PgBoss } from '../lib/pg-boss/load-pg-boss';
import { REPLAY_BATCH } from '../lib/pg-boss/pg-boss-inbox';
import { buildEvent } from '../lib/testing';
import { describeEachEngine } from './support/describe-each-engine';
import { pgBossEngine } from './support/inbox-engines';

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

/** A boss whose reads of the dead-letter queue are counted, row by row. */
function countingBoss(boss: PgBoss, reads: number[]): PgBoss {
  return new Proxy(boss, {
    get(target, property) {
      if (property === 'getDb')
        return () => {
          const db = target.getDb();
          return {
            async executeSql(text: string, values?: unknown[]) {
              const result = await db.executeSql(text, values);
              if (values?.[0] === DEAD) reads.push(result.rows.length);
              return result;
            },
          };
        };
      if (property === 'findJobs')
        return async (...args: Parameters<PgBoss['findJobs']>) => {
          const jobs = await target.findJobs(...args);
          if (args[0] === DEAD) reads.push(jobs.length);
          return jobs;
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
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
      inbox = pgBossInbox({ boss: countingBoss(boss, reads), name: NAME });
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
