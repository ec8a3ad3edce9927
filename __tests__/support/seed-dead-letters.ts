import { Queue, Worker } from 'bullmq';
import { normalizeEvent } from '../../lib/events/normalize-event';
import { idempotencyKey } from '../../lib/idempotency/store-keys';
import { jobIdFor, queuedDelivery, type QueuedDelivery } from '../../lib/inbox/queued-delivery';
import type { DeadLetterData } from '../../lib/pg-boss/dead-letter-data';
import { loadPgBoss } from '../../lib/pg-boss/load-pg-boss';
import { buildEvent } from '../../lib/testing';
import { eventually, type InboxEngine } from './inbox-engines';

/** Event `i` of a seeded batch: ids `${prefix}-${i}`, every third one of another type. */
export function seededDelivery(prefix: string, i: number): QueuedDelivery {
  const type = i % 3 === 2 ? 'ag.hid_org.created' : 'ag.access_pass.issued';
  const envelope = buildEvent(type, {}, { id: `${prefix}-${i}` });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, event.id), event, () => undefined, null);
}

/** How many jobs one engine call adds: the setup's memory stays bounded however many are seeded. */
const CHUNK = 5_000;
/** How many jobs BullMQ's seeding fails at once. */
const SLOTS = 20;

/**
 * Puts `count` dead letters in queue `name` through the engine's own API, fast: pg-boss `insert`s
 * them straight into `<name>.dead` as the worker writes them; BullMQ `addBulk`s them with one try
 * each and a worker of the test's own takes and fails each into the failed set. Bounded by `timeoutMs`.
 */
export async function seedDeadLetters(
  engine: InboxEngine,
  url: string,
  name: string,
  count: number,
  prefix = 'd',
  timeoutMs = 60_000,
): Promise<void> {
  if (engine.name === 'pg-boss') {
    const boss = new (loadPgBoss().PgBoss)({ connectionString: url });
    boss.on('error', () => undefined);
    await boss.start();
    try {
      for (let from = 0; from < count; from += CHUNK) {
        const jobs = Array.from(
          { length: Math.min(CHUNK, count - from) },
          (_, k): { data: DeadLetterData } => ({
            data: {
              delivery: seededDelivery(prefix, from + k),
              attempts: 13,
              lastError: 'Error: the CRM is down',
              failedAt: new Date(Date.UTC(2026, 10, 20) + (from + k) * 1000).toISOString(),
            },
          }),
        );
        await boss.insert(`${name}.dead`, jobs);
      }
    } finally {
      await boss.stop({ graceful: false, timeout: 5000 });
    }
    return;
  }
  const queue = new Queue(name, { connection: { url } });
  // No processor: its slots take jobs one by one (getNextJob) and fail each at once (moveToFailed),
  // BullMQ's two public calls for a worker of your own: about twice as fast as a processor that throws.
  const failing = new Worker(name, null, { connection: { url }, autorun: false });
  failing.on('error', () => undefined);
  const deadline = Date.now() + timeoutMs;
  try {
    const before = await queue.getFailedCount();
    for (let from = 0; from < count; from += CHUNK) {
      await queue.addBulk(
        Array.from({ length: Math.min(CHUNK, count - from) }, (_, k) => {
          const delivery = seededDelivery(prefix, from + k);
          return {
            name: delivery.type,
            data: delivery,
            opts: { jobId: jobIdFor(delivery.key), attempts: 1, removeOnFail: false },
          };
        }),
      );
    }
    const failure = new Error('the CRM is down');
    await Promise.all(
      Array.from({ length: SLOTS }, async (_, slot) => {
        const token = `seed-${slot}`;
        // Each turn takes one of the jobs just added: at most `count` turns in all.
        for (let job = await failing.getNextJob(token, { block: false }); job !== undefined;) {
          if (Date.now() > deadline)
            throw new Error(`seeding ${count} dead letters: not within ${timeoutMs} ms`);
          await job.moveToFailed(failure, token);
          job = await failing.getNextJob(token, { block: false });
        }
      }),
    );
    await eventually(
      `${count} failed jobs`,
      async () => (await queue.getFailedCount()) === before + count,
      Math.max(1000, deadline - Date.now()),
    );
  } finally {
    await failing.close();
    await queue.close();
  }
}
