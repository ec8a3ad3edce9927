import type { ConnectionOptions, Job } from 'bullmq';
import { openTelemetryTracing } from '../observability/open-telemetry-tracing';
import { inboxWorkerCore } from '../core/dispatch/inbox-worker-core';
import type { EventRouter } from '../events/event-router';
import type { InboxWorkerOptions } from '../inbox/inbox';
import type { QueuedDelivery } from '../inbox/queued-delivery';
import { loadBullmq } from './load-bullmq';
import { workerConnection } from './worker-connection';

/** Where the worker finds its jobs: the same Redis, key prefix and name as the queue that adds them. */
export interface WorkerQueue {
  name: string;
  connection: ConnectionOptions;
  /** BullMQ's key prefix; `'bull'` unless the queue was made with its own. */
  prefix: string;
  skipVersionCheck?: boolean | undefined;
}

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
 * A BullMQ Worker running the shared runner: a failed try is retried after the delay the worker's
 * backoff (or the handler's RetryLater) chose; the last one, or one no retry can help, fails the
 * job for good (BullMQ's failed set: the dead letters). A try put back (busy) is delayed, not failed.
 */
export async function startBullmqWorker(
  queue: WorkerQueue,
  lockDuration: number,
  router: EventRouter,
  options: InboxWorkerOptions | undefined,
): Promise<{ close(): Promise<void> }> {
  const core = inboxWorkerCore(router, options, 'inbox.startWorker', openTelemetryTracing);
  const { DelayedError, UnrecoverableError, Worker } = loadBullmq();
  const processJob = async (job: Job<QueuedDelivery>, token?: string) => {
    const attempt = job.attemptsMade + 1;
    const next = await core.run(job.data, attempt);
    if (next.then === 'complete') return next.status;
    if (next.then === 'dead') throw new UnrecoverableError(next.error);
    if (next.then === 'putBack' && token !== undefined) {
      // Delayed without spending an attempt (BullMQ skips attemptsMade for a job moved this way).
      await job.moveToDelayed(Date.now() + next.delayMs, token);
      throw new DelayedError();
    }
    throw new TryFailed(next.error, next.delayMs);
  };
  const { connection, release } = workerConnection(queue.connection);
  const worker = new Worker<QueuedDelivery>(queue.name, processJob, {
    connection,
    prefix: queue.prefix,
    ...(queue.skipVersionCheck === undefined ? {} : { skipVersionCheck: queue.skipVersionCheck }),
    concurrency: core.concurrency,
    lockDuration,
    // Stalled jobs (a killed worker's) are looked for as often as a lock can run out.
    stalledInterval: lockDuration,
    // A job whose worker died is run again rather than failed: its attempts decide, not the crashes.
    maxStalledCount: core.attempts,
    settings: {
      backoffStrategy: (attemptsMade, _type, error) =>
        error instanceof TryFailed ? error.delayMs : core.delayAfter(attemptsMade, undefined),
    },
  });
  worker.on('error', (error) => core.log.error({ err: error }, 'the BullMQ worker reported an error'));
  const close = () => worker.close().finally(release);
  try {
    await worker.waitUntilReady();
  } catch (error) {
    await close();
    throw error;
  }
  return { close };
}
