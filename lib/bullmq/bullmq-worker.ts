import type { ConnectionOptions, Job } from 'bullmq';
import { openTelemetryTracing } from '../observability/open-telemetry-tracing';
import { engineErrorLog } from '../inbox/worker/engine-error-log';
import { rateLimitedLog } from '../rate-limited-log';
import { inboxWorkerCore } from '../inbox/worker/inbox-worker-core';
import type { EventRouter } from '../events/event-router';
import type { InboxWorkerOptions } from '../inbox/inbox';
import { loadBullmq } from './load-bullmq';
import { workerConnection } from './redis-connection';
import {
  jobHandlersOf,
  withoutHandlers,
  type HandlerStates,
  type JobHandlers,
  type QueuedDelivery,
} from '../inbox/queued-delivery';

/** Where the worker finds its jobs: the same Redis, key prefix and name as the queue that adds them. */
export interface WorkerQueue {
  name: string;
  connection: ConnectionOptions;
  /** BullMQ's key prefix; `'bull'` unless the queue was made with its own. */
  prefix: string;
  skipVersionCheck?: boolean | undefined;
  /**
   * Holds every worker of the queue off for `expireTimeMs` (the queue's limiter key, in Redis): the
   * Queue's `rateLimit`, which BullMQ keeps where it deprecated the Worker's.
   */
  rateLimit(expireTimeMs: number): Promise<void>;
}

/** How the worker runs jobs: the lock, and how often a job may lose its worker before it fails. */
export interface WorkerLimits {
  lockDuration: number;
  maxStalledCount: number;
}

/**
 * How long BullMQ keeps a completed job, given to every worker of the inbox: 7 hours, past the
 * Service's 6-hour retries (its id is the redelivery's guard: an add of it adds nothing), at most
 * 100 000. A failed one (a dead letter) is kept until replayed or cleaned, a worker's default. BullMQ
 * reads a worker's retention only for a job that names none: the inbox's own queue adds its jobs
 * without one, since Redis writes a job's options as JSON on every add and these cost it some 15k
 * of ~204k instructions an add; on an app's Queue each job names both, over its `defaultJobOptions`.
 */
export const KEEP_COMPLETED = Object.freeze({ age: 7 * 60 * 60, count: 100_000 });

/** A failed try, carrying the delay the worker chose (BullMQ's backoff strategy reads it). */
class TryFailed extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
    this.name = 'TryFailed';
  }
}

/**
 * A BullMQ Worker running the shared runner, with BullMQ counting the tries: a failed try is thrown,
 * and BullMQ retries it after the delay the worker's backoff (or the handler's RetryLater) chose
 * (the backoff strategy reads it) until the job's `attempts` are spent, then fails it for good
 * (BullMQ's failed set: the dead letters). A try no retry can help, or past the worker's own
 * `attempts`, fails at once (UnrecoverableError). A try put back (busy) is delayed without spending
 * an attempt; a RateLimited one goes back to waiting, and the whole queue waits (BullMQ's Queue.rateLimit).
 * A job whose worker stopped mid-try (killed: its lock ran out) runs again, and after
 * `maxStalledCount` such stops BullMQ fails it into the dead letters, in Redis, by its own scripts.
 */
export async function startBullmqWorker(
  queue: WorkerQueue,
  limits: WorkerLimits,
  router: EventRouter,
  options: InboxWorkerOptions | undefined,
  /** Told of each job once BullMQ holds it in its failed set (a dead letter): the issue tally. */
  onDead: (job: Job) => Promise<void>,
): Promise<{ close(): Promise<void> }> {
  const core = inboxWorkerCore(router, options, 'inbox.startWorker', openTelemetryTracing);
  const { DelayedError, UnrecoverableError, Worker } = loadBullmq();
  /**
   * Keeps the handlers' states in the job's data for its next try (or its dead letter), dropping a
   * replay's `runOnly` once the job is dead: a plain replay of it runs every handler not yet done.
   * Not kept (Redis away): the store still says which handlers succeeded, and a try not counted.
   */
  async function keep(job: Job<QueuedDelivery & JobHandlers>, handlers: HandlerStates, dead: boolean) {
    const { runOnly: _only, ...data } = job.data;
    try {
      await job.updateData({ ...data, handlers, ...(dead || _only === undefined ? {} : { runOnly: _only }) });
    } catch (error) {
      core.log.warn(
        { eventId: job.data.id, err: error },
        "could not keep the handlers' states with the job; its next try counts from what it held",
      );
    }
  }
  const processJob = async (job: Job<QueuedDelivery & JobHandlers>, token?: string) => {
    const attempt = job.attemptsMade + 1;
    const next = await core.run(withoutHandlers(job.data), attempt, jobHandlersOf(job.data));
    if (next.then === 'complete') return next.status;
    if (next.then === 'rateLimited') {
      // Every worker of the queue holds off (the limiter key, in Redis), and the job goes back to
      // waiting with its attempts as they were (BullMQ's manual rate limit). The hold comes first:
      // any round trip before it lets the other slots start tries the downstream would refuse.
      await queue.rateLimit(next.delayMs);
      if (next.handlers !== undefined) await keep(job, next.handlers, false);
      throw Worker.RateLimitError();
    }
    if (next.handlers !== undefined)
      await keep(job, next.handlers, next.then === 'dead' || attempt >= (job.opts.attempts ?? 1));
    if (next.then === 'dead') throw new UnrecoverableError(next.error);
    if (next.then === 'putBack' && token !== undefined) {
      // Delayed without spending an attempt: BullMQ counts attemptsStarted, not attemptsMade, for it.
      await job.moveToDelayed(Date.now() + next.delayMs, token);
      throw new DelayedError();
    }
    // A job enqueued with fewer attempts than this worker's (another inbox's setting) ends here.
    if (attempt >= (job.opts.attempts ?? 1))
      core.log.error(
        { eventId: job.data.id, type: job.data.type, attempt, error: next.error },
        "a queued event failed for good (its job's attempts are spent); it is kept in the dead letters until replayed",
      );
    throw new TryFailed(next.error, next.delayMs);
  };
  const { connection, release } = workerConnection(queue.connection);
  const worker = new Worker<QueuedDelivery & JobHandlers>(queue.name, processJob, {
    connection,
    prefix: queue.prefix,
    ...(queue.skipVersionCheck === undefined ? {} : { skipVersionCheck: queue.skipVersionCheck }),
    concurrency: core.concurrency,
    // BullMQ's limiter counts in Redis, so it bounds every worker of the queue together. Without a
    // rate, one no count reaches: BullMQ reads a RateLimited's hold (rateLimit) only under a limiter.
    limiter:
      core.rate === undefined
        ? { max: Number.MAX_SAFE_INTEGER, duration: 60_000 }
        : { max: core.rate.max, duration: core.rate.perMs },
    lockDuration: limits.lockDuration,
    removeOnComplete: KEEP_COMPLETED,
    // Stalled jobs (a killed worker's) are looked for as often as a lock can run out.
    stalledInterval: limits.lockDuration,
    // A job that kills its worker (out of memory, a crash in native code) is failed after a few
    // stops, not run until its attempts are spent: each stop is a worker lost.
    maxStalledCount: limits.maxStalledCount,
    settings: {
      backoffStrategy: (attemptsMade, _type, error) =>
        error instanceof TryFailed ? error.delayMs : core.delayAfter(attemptsMade, undefined),
    },
  });
  const errors = engineErrorLog(core.log, 'the BullMQ worker');
  const untallied = rateLimitedLog(core.log);
  worker.on('error', (error) => errors.error(error));
  // Either of the worker's two connections ready again: the outage, if any, is over.
  worker.getBackend().on('ready', () => errors.connected());
  worker.on('failed', (job, error) => {
    // Set only by a move into the failed set (a retry clears it): this failure is the last.
    if (job?.finishedOn !== undefined)
      onDead(job).catch((err: unknown) =>
        untallied(
          'warn',
          'issue-tally',
          { eventId: job.data.id, err },
          "could not count a dead letter in its issue; the issues' reconcile counts it within a pass",
        ),
      );
    // Failed by BullMQ itself, not by a try: it lost its worker more than maxStalledCount times.
    if (job?.deferredFailure === undefined || error.message !== job.deferredFailure) return;
    core.log.error(
      { eventId: job.data.id, type: job.data.type, stalls: job.stalledCounter, error: error.message },
      'a queued event stopped its worker mid-try too many times; it is kept in the dead letters until replayed',
    );
  });
  const close = () => worker.close().finally(release);
  try {
    await worker.waitUntilReady();
  } catch (error) {
    await close();
    throw error;
  }
  return { close };
}
