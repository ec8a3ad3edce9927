import { openTelemetryTracing } from '../observability/open-telemetry-tracing';
import { inboxWorkerCore } from '../core/dispatch/inbox-worker-core';
import type { EventRouter } from '../events/event-router';
import type { InboxWorkerOptions } from '../inbox/inbox';
import { isQueuedDelivery } from '../inbox/queued-delivery';
import { DEAD_LETTER_RETENTION_MS } from '../inbox/dead-letter-retention';
import { isDeadLetterData, type DeadLetterData } from './dead-letter-data';
import type { PgBoss, PgBossJob } from './load-pg-boss';

/** How long a dead letter is kept. */
const DEAD_RETENTION_SECONDS = DEAD_LETTER_RETENTION_MS / 1000;

/** How long an idle loop waits before it asks for a job again. */
const POLL_MS = 250;

interface Queues {
  name: string;
  dead: string;
  schema: string;
}

/**
 * `concurrency` loops, each fetching one job at a time and running the shared runner. A failed try
 * is failed in pg-boss and its next start set to the delay the worker chose; a busy one is put back
 * without counting as an attempt; the last failed one (or one no
 * retry can help) is copied to the dead-letter queue, with its attempts and error, and left cancelled
 * in the queue (its id refuses a redelivery); a replay moves the dead letter back (pg-boss's redrive)
 * as a new job with its own id.
 */
export function startPgBossWorker(
  boss: PgBoss,
  queues: Queues,
  router: EventRouter,
  options: InboxWorkerOptions | undefined,
): { close(): Promise<void> } {
  const core = inboxWorkerCore(router, options, 'inbox.startWorker', openTelemetryTracing);
  const { name, dead, schema } = queues;
  let stopping = false;
  const sleeping = new Set<() => void>();
  const idle = () =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleeping.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, POLL_MS);
      sleeping.add(wake);
    });

  async function deadLetter(job: PgBossJob, attempts: number, lastError: string): Promise<void> {
    const data: DeadLetterData = {
      delivery: (isDeadLetterData(job.data) ? job.data.delivery : job.data) as DeadLetterData['delivery'],
      attempts,
      lastError,
      failedAt: new Date().toISOString(),
    };
    // The dead letter's id is the job's: a crash between the two steps, run again, adds nothing twice.
    await boss.send(dead, data, { id: job.id, retentionSeconds: DEAD_RETENTION_SECONDS });
    // The job stays in the queue, cancelled, as long as its dead letter (it was sent with a longer
    // deleteAfterSeconds): its id keeps a redelivery's send from adding it again (BullMQ's failed job
    // does the same). Never deleted in between, so no receiver can slip a send through. Fenced to
    // this try: a job another worker took back after it expired is left to that worker.
    await boss.cancel(name, { id: job.id, retryCount: job.retryCount });
  }

  /**
   * A busy try is given back as pg-boss's restore() does (created, never started), so the next claim
   * does not count an attempt, and starts after `delayMs`: one statement, fenced to this claim.
   */
  async function putBack(job: PgBossJob, delayMs: number): Promise<void> {
    await boss.getDb().executeSql(
      `UPDATE ${schema}.job
          SET state = 'created', started_on = NULL, heartbeat_on = NULL,
              start_after = now() + $4 * interval '1 millisecond'
        WHERE name = $1 AND id = $2 AND state = 'active' AND retry_count = $3`,
      [name, job.id, job.retryCount, delayMs],
    );
  }

  async function settle(job: PgBossJob): Promise<void> {
    const attempt = job.retryCount + 1;
    // A replayed dead letter: pg-boss's redrive() re-creates the job with the dead letter's data.
    const delivery = isDeadLetterData(job.data) ? job.data.delivery : job.data;
    if (!isQueuedDelivery(delivery))
      return deadLetter(job, attempt, 'the job does not hold a queued delivery');
    const next = await core.run(delivery, attempt);
    if (next.then === 'complete') {
      await boss.complete(name, job.id, { status: next.status });
      return;
    }
    if (next.then === 'dead') return deadLetter(job, attempt, next.error);
    if (next.then === 'putBack') return putBack(job, next.delayMs);
    await boss.fail(name, { id: job.id, retryCount: job.retryCount }, { error: next.error });
    const delayMs = next.delayMs;
    await boss
      .getDb()
      .executeSql(
        `UPDATE ${schema}.job SET start_after = now() + $3 * interval '1 millisecond' WHERE name = $1 AND id = $2 AND state = 'retry'`,
        [name, job.id, delayMs],
      );
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      let jobs: PgBossJob[] = [];
      try {
        jobs = await boss.fetch(name, { batchSize: 1, includeMetadata: true });
      } catch (error) {
        core.log.error({ err: error }, 'could not fetch a job from pg-boss; trying again');
      }
      const job = jobs[0];
      if (job === undefined) {
        await idle();
        continue;
      }
      try {
        await settle(job);
      } catch (error) {
        // pg-boss takes the job back once it expires: nothing is lost, it runs again.
        core.log.error(
          { err: error, jobId: job.id },
          'could not settle a job in pg-boss; it runs again when it expires',
        );
      }
    }
  }

  const loops = Array.from({ length: core.concurrency }, () => loop());
  return {
    async close() {
      stopping = true;
      for (const wake of [...sleeping]) wake();
      await Promise.allSettled(loops);
    },
  };
}
