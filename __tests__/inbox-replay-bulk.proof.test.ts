// 100 000 dead letters replayed on each engine in memory for one page: every read of the dead
// letters brings back at most a page, each page is put back before the next is read, and the
// replay's progress reaches the whole count with none lost. Pages are counted, not timed.
import type { Queue } from 'bullmq';
import type { Inbox } from '../lib';
import { bullmqInbox } from '../lib/bullmq';
import { PAGE } from '../lib/bullmq/bullmq-dead-letters';
import { pgBossInbox } from '../lib/pg-boss';
import { loadPgBoss, type PgBoss } from '../lib/pg-boss/load-pg-boss';
import { REPLAY_BATCH } from '../lib/pg-boss/pg-boss-inbox';
import { loadBullmq } from '../lib/bullmq/load-bullmq';
import { countingBoss } from './support/counting-boss';
import { describeEachEngine } from './support/describe-each-engine';
import { seedDeadLetters } from './support/seed-dead-letters';

const COUNT = 100_000;
/**
 * The setup's own bound, against a hang: seeding 100 000 through the engine's API (BullMQ's took
 * 1.5 to 4.5 minutes on two cores busy with other builds).
 */
const SEED_MS = 10 * 60_000;

describeEachEngine('a replay of 100 000 dead letters on $name', (engine, server) => {
  const name = `bulk-${process.pid}`;
  const page = engine.name === 'bullmq' ? PAGE : REPLAY_BATCH;
  /** Rows each read of the dead letters brought back, and how many were put back before it. */
  const reads: { rows: number; queuedBefore: number }[] = [];
  let inbox: Inbox;
  /** How many the replay had put back when it last reported, before the read that follows. */
  let sofar = 0;
  let close: () => Promise<void>;

  beforeAll(async () => {
    if (engine.name === 'pg-boss') {
      const boss: PgBoss = new (loadPgBoss().PgBoss)({ connectionString: server().url });
      boss.on('error', () => undefined);
      await boss.start();
      // Every read of the dead-letter queue counted, row by row, with the queue's depth before it.
      const counted = countingBoss(
        boss,
        `${name}.dead`,
        (rows) => void reads.push({ rows, queuedBefore: sofar }),
      );
      inbox = pgBossInbox({ boss: counted, name });
      close = async () => {
        await inbox.close();
        await boss.stop({ graceful: false, timeout: 5000 });
      };
    } else {
      const queue: Queue = new (loadBullmq().Queue)(name, { connection: { url: server().url } });
      const getFailed = queue.getFailed.bind(queue);
      queue.getFailed = async (start?: number, end?: number) => {
        const jobs = await getFailed(start, end);
        reads.push({ rows: jobs.length, queuedBefore: sofar });
        return jobs;
      };
      inbox = bullmqInbox({ queue, logger: false });
      close = async () => {
        await inbox.close();
        await queue.close();
      };
    }
    await inbox.status(); // makes the queues
    await seedDeadLetters(engine, server().url, name, COUNT, 'bulk', SEED_MS);
    expect((await inbox.status()).dead).toBe(COUNT);
  }, SEED_MS + 60_000);
  afterAll(() => close?.());

  it(
    'holds one page at a time, and puts every one back once',
    async () => {
      let pages = 0;
      let last = { replayed: 0, matched: 0 };
      const replayed = await inbox.replay(
        {},
        {
          onProgress: (p) => {
            pages++;
            last = p;
            sofar = p.replayed;
          },
        },
      );
      expect(replayed).toBe(COUNT);
      expect(last).toEqual({ replayed: COUNT, matched: COUNT });
      // Never more than a page read at once, so never more than a page held.
      expect(Math.max(...reads.map((r) => r.rows))).toBeLessThanOrEqual(page);
      expect(pages).toBeGreaterThanOrEqual(COUNT / page);
      // Each page is put back before the next is read: between two reads, a page at most was put back.
      for (const [i, read] of reads.entries())
        if (i > 0) {
          expect(read.queuedBefore).toBeGreaterThanOrEqual(reads[i - 1]!.queuedBefore);
          expect(read.queuedBefore - reads[i - 1]!.queuedBefore).toBeLessThanOrEqual(page);
        }
      expect(await inbox.status()).toMatchObject({ waiting: COUNT, dead: 0 });
    },
    15 * 60_000,
  );
});
