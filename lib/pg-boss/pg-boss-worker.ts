import { openTelemetryTracing } from '../observability/open-telemetry-tracing';
import { inboxWorkerCore } from '../inbox/worker/inbox-worker-core';
import type { EventRouter } from '../events/event-router';
import type { InboxWorkerOptions } from '../inbox/inbox';
import {
  isQueuedDelivery,
  jobHandlersOf,
  withoutHandlers,
  type HandlerStates,
} from '../inbox/queued-delivery';
import { issueRefsOf } from '../inbox/inbox-issue';
import { DEAD_LETTER_RETENTION_SECONDS } from '../inbox/dead-letter-retention';
import { isDeadLetterData, type DeadLetterData } from './dead-letter-data';
import type { PgBoss, PgBossJob } from './load-pg-boss';
import { engineErrorLog } from '../inbox/worker/engine-error-log';
import { isPaused, PAUSE_READ_MS } from './pause-flag';
import { startWindow } from '../inbox/worker-rate';
import { checkTransactions, inTransaction } from './in-transaction';

/**
 * Until when each queue's workers in this process start no try, by queue name: a handler's
 * RateLimited holds them all. pg-boss has no rate limit to set, so the hold is this process's; a
 * worker of the queue in another process holds off only when a handler of its own throws one.
 */
const heldUntil = new Map<string, number>();

/** Holds queue `name`'s workers in this process for `ms` from now (a longer hold already set stays). */
function holdQueue(name: string, ms: number): void {
  const until = Date.now() + ms;
  if ((heldUntil.get(name) ?? 0) < until) heldUntil.set(name, until);
}

/** How many ms queue `name`'s workers in this process still hold off; 0 when they may start tries. */
function queueHeldFor(name: string): number {
  const until = heldUntil.get(name);
  if (until === undefined) return 0;
  const left = until - Date.now();
  if (left > 0) return left;
  heldUntil.delete(name);
  return 0;
}

/** This try of `job`: pg-boss settles it only while the job is still this claim's. */
const attemptOf = (job: PgBossJob) => ({ id: job.id, retryCount: job.retryCount });

/** Whether a fenced settle took effect: false once the try's claim has lapsed. */
const affected = (response: object) => ((response as { affected?: number }).affected ?? 0) > 0;

/** How many of the job's claims were busy tries, put back (see `again`). */
function putBacksOf(data: unknown): number {
  const n = (data as { putBacks?: unknown } | null)?.putBacks;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/**
 * The queued delivery a job holds: its data, or a replayed dead letter's (redrive copies its data),
 * without what the job carries besides (its put-backs, its handlers' states).
 */
function deliveryOf(data: unknown): unknown {
  const held = isDeadLetterData(data) ? data.delivery : data;
  if (typeof held !== 'object' || held === null) return held;
  if (!('putBacks' in held)) return withoutHandlers(held);
  const { putBacks: _counted, ...delivery } = held as Record<string, unknown>;
  return withoutHandlers(delivery);
}

/** How long an idle loop waits before it asks for a job again. */
const POLL_MS = 250;

interface Queues {
  name: string;
  dead: string;
}

/** A running pg-boss worker. */
export interface PgBossWorker {
  close(): Promise<void>;
  /** Tells the worker the queue was paused or resumed here, before its next read of the flag. */
  pausedNow(paused: boolean): void;
}

/**
 * `concurrency` loops, each fetching one job at a time and running the shared runner. A failed try
 * is failed in pg-boss and its next start set to the delay the worker chose; a busy one is put back
 * without counting as an attempt, as is a RateLimited one (which also holds every worker of the queue
 * in this process for its delay); the last failed one (or one no retry can help) is copied to the
 * dead-letter queue, with its attempts and error, and left cancelled in the queue (its id refuses a
 * redelivery). Each settle is fenced to its try, its steps in one transaction. A replay moves the
 * dead letter back (pg-boss's redrive) as a new job with its own id.
 */
export function startPgBossWorker(
  boss: PgBoss,
  queues: Queues,
  router: EventRouter,
  options: InboxWorkerOptions | undefined,
): PgBossWorker {
  const core = inboxWorkerCore(router, options, 'inbox.startWorker', openTelemetryTracing);
  checkTransactions(boss, 'inbox.startWorker');
  const { name, dead } = queues;
  let stopping = false;
  const sleeping = new Set<() => void>();
  /** Waits `ms`, or less when the worker stops. */
  const idle = (ms = POLL_MS) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleeping.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleeping.add(wake);
    });
  // A lost database shows first in the pause flag's read, then in the fetch: one log for both.
  const engineErrors = engineErrorLog(core.log, 'the pg-boss worker');
  // pg-boss has no limiter: the rate holds per worker, its loops sharing one window.
  const rateWindow = core.rate === undefined ? undefined : startWindow(core.rate);

  // The pause flag, read at most once a PAUSE_READ_MS for all the loops: a pause reaches them
  // within about that long, and a thousand idle workers do not read it a thousand times a poll.
  let known: { at: number; paused: boolean } | undefined;
  let reading: Promise<boolean> | undefined;
  function paused(): Promise<boolean> | boolean {
    if (known !== undefined && Date.now() - known.at < PAUSE_READ_MS) return known.paused;
    // An answer is as old as its question: dated at its arrival, a read the database was slow to
    // answer would be trusted that much longer, and a pause made meanwhile reach this worker later.
    const asked = Date.now();
    reading ??= isPaused(boss, name)
      .then(
        (now) => {
          known = { at: asked, paused: now };
          engineErrors.connected();
          return now;
        },
        // Unread, the queue counts as paused and is read again next time: starting a try on a
        // queue that may be paused is the one wrong answer (holding back loses nothing).
        (error: unknown) => {
          engineErrors.error(error);
          return true;
        },
      )
      .finally(() => {
        reading = undefined;
      });
    return reading;
  }

  /**
   * Cancels the job (fenced to this try) and sends its dead letter, in one transaction: a try whose
   * claim lapsed (another worker has the job) cancels nothing and so sends nothing, and a process
   * that dies in between commits neither, leaving the job running until pg-boss takes it back. At
   * no instant is the event neither queued, running nor dead.
   */
  async function deadLetter(
    job: PgBossJob,
    delivery: unknown,
    attempts: number,
    lastError: string,
    handlers?: HandlerStates,
  ) {
    // A replay's runOnly is not kept: a plain replay of this dead letter runs every handler not done.
    const data: DeadLetterData = {
      delivery: delivery as DeadLetterData['delivery'],
      attempts,
      lastError,
      failedAt: new Date().toISOString(),
      ...(handlers === undefined ? {} : { handlers }),
    };
    // Grouped now, once, so `issues()` counts the dead queue in PostgreSQL without reading it out.
    if (isQueuedDelivery(delivery)) data.issues = issueRefsOf(data);
    await inTransaction(boss, async (db) => {
      // The job stays in the queue, cancelled, as long as its dead letter (it was sent with a longer
      // deleteAfterSeconds): its id keeps a redelivery's send from adding it again (BullMQ's failed
      // job does the same).
      if (!affected(await boss.cancel(name, attemptOf(job), { db }))) return false;
      // The dead letter's id is the job's: one already there (left by an older version) is kept.
      await boss.send(dead, data, { id: job.id, retentionSeconds: DEAD_LETTER_RETENTION_SECONDS, db });
      return true;
    });
  }

  /**
   * The job runs again after `delayMs`: failed (fenced to this try, so a claim that lapsed changes
   * nothing) and its start moved to the delay the worker chose (pg-boss's own is 1 s), in one
   * transaction, so no other worker can fetch the job between the two. A busy try (`putBacks` one
   * more than the job held) must not count as an attempt, but pg-boss counts every claim, so the job
   * carries how many of its claims were put back, and the attempt is the claims less those. The
   * handlers' states after this try (`handlers`) are kept in its data the same way.
   */
  async function again(
    job: PgBossJob,
    delayMs: number,
    error: string,
    putBacks: number,
    handlers?: HandlerStates,
  ) {
    await inTransaction(boss, async (db) => {
      if (!affected(await boss.fail(name, attemptOf(job), { error }, { db }))) return false;
      const data =
        putBacks === putBacksOf(job.data) && handlers === undefined
          ? undefined
          : { ...(job.data as object), putBacks, ...(handlers === undefined ? {} : { handlers }) };
      const moved = await boss.update(name, data, {
        id: job.id,
        startAfter: Math.max(1, delayMs) / 1000,
        db,
      });
      // Failed just now in this transaction, the job is waiting: anything else is a fault to retry.
      if (moved.updated !== 1) throw new Error(`pg-boss updated ${moved.updated} jobs, not the one failed`);
      return true;
    });
  }

  async function settle(job: PgBossJob): Promise<void> {
    const putBacks = putBacksOf(job.data);
    // A fetch already under way when the queue was paused (here, or as last read) starts no try: the
    // job goes back uncounted, as a busy one does, until the queue is resumed.
    if (known?.paused === true)
      return again(job, PAUSE_READ_MS, 'the queue was paused as this try was fetched', putBacks + 1);
    // Likewise a fetch under way when a handler's RateLimited held the queue.
    const held = queueHeldFor(name);
    if (held > 0) return again(job, held, 'the queue was rate limited as this try was fetched', putBacks + 1);
    const attempt = job.retryCount + 1 - putBacks;
    const delivery = deliveryOf(job.data);
    if (!isQueuedDelivery(delivery))
      return deadLetter(job, delivery, attempt, 'the job does not hold a queued delivery');
    const next = await core.run(delivery, attempt, jobHandlersOf(job.data));
    if (next.then === 'complete') {
      await boss.complete(name, attemptOf(job), { status: next.status });
      return;
    }
    if (next.then === 'dead') return deadLetter(job, delivery, attempt, next.error, next.handlers);
    // Held before the job is put back, so the other loops stop fetching as soon as can be.
    if (next.then === 'rateLimited') holdQueue(name, next.delayMs);
    const uncounted = next.then === 'putBack' || next.then === 'rateLimited';
    return again(job, next.delayMs, next.error, uncounted ? putBacks + 1 : putBacks, next.handlers);
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      if (await paused()) {
        await idle();
        continue;
      }
      const held = queueHeldFor(name);
      if (held > 0) {
        await idle(held);
        continue;
      }
      const hold = await rateWindow?.take(idle, () => stopping);
      if (rateWindow !== undefined && hold === undefined) return;
      let jobs: PgBossJob[] = [];
      try {
        jobs = await boss.fetch(name, { batchSize: 1, includeMetadata: true });
        engineErrors.connected();
      } catch (error) {
        // Every loop asks four times a second: with the database away, one line per reason a minute.
        engineErrors.error(error);
      }
      const job = jobs[0];
      if (job === undefined) hold?.unused();
      else hold?.started();
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
    pausedNow(now) {
      known = { at: Date.now(), paused: now };
    },
    async close() {
      stopping = true;
      for (const wake of [...sleeping]) wake();
      await Promise.allSettled(loops);
    },
  };
}
