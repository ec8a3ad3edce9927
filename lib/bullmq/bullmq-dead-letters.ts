import type { Job, Queue } from 'bullmq';
import { deadLetterReason } from '../core/dispatch/dead-letter-reason';
import type { DeadLetter, ReplayFilter } from '../inbox/inbox';
import { isQueuedDelivery, type QueuedDelivery } from '../inbox/queued-delivery';
import { replayPages, type ReplayOptions } from '../inbox/replay-pages';

/** How many failed jobs one read brings back: memory holds one page, however many there are. */
export const PAGE = 500;

/** BullMQ's failed set read as dead letters: the jobs holding a queued delivery that `match`es, newest first. */
export async function failedJobs(
  queue: Queue,
  match: (d: QueuedDelivery, job: Job) => boolean,
  limit: number,
): Promise<Job[]> {
  const found: Job[] = [];
  for (let start = 0; found.length < limit; start += PAGE) {
    const page = await queue.getFailed(start, start + PAGE - 1);
    for (const job of page) if (isQueuedDelivery(job.data) && match(job.data, job)) found.push(job);
    if (page.length < PAGE) break;
  }
  return found.slice(0, limit);
}

/** Puts one failed job back with fresh tries; false when it was no longer failed (replayed meanwhile). */
async function retried(job: Job): Promise<boolean> {
  try {
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * Replays the failed jobs `target` names a page at a time, never holding more than one page. A
 * replayed job leaves the failed set, so the next page starts after the jobs that stayed. The set is
 * ordered by failure time, newest first: a `since` walk stops at the first page reaching older ones.
 * Each job is put back by one script of BullMQ's (`retry`), so a stop between pages leaves none half
 * replayed.
 */
export function replayFailed(
  queue: Queue,
  target: string | ReplayFilter,
  options: ReplayOptions,
): Promise<number> {
  const match = replayMatch(target);
  const since = typeof target === 'string' ? undefined : target.since?.getTime();
  let start = 0;
  return replayPages(async () => {
    const page = await queue.getFailed(start, start + PAGE - 1);
    let stayed = 0;
    let matched = 0;
    let replayed = 0;
    for (const job of page) {
      if (!isQueuedDelivery(job.data) || !match(job.data, job)) {
        stayed++;
        continue;
      }
      matched++;
      if (options.dryRun === true) stayed++;
      else if (await retried(job)) replayed++;
      else if (await job.isFailed()) stayed++;
    }
    start += stayed;
    const oldest = page.at(-1)?.finishedOn;
    const done = page.length < PAGE || (since !== undefined && oldest !== undefined && oldest < since);
    return { matched, replayed, done };
  }, options);
}

export function deadLetterOf(job: Job): DeadLetter {
  const delivery = job.data as QueuedDelivery;
  return {
    delivery,
    attempts: job.attemptsMade,
    lastError: job.failedReason ?? null,
    receivedAt: new Date(delivery.receivedAt),
    failedAt: job.finishedOn === undefined ? null : new Date(job.finishedOn),
    ...deadLetterReason(delivery, job.failedReason ?? null),
  };
}

/** Which failed jobs a replay target names: one event by id, or a type and failure time. */
function replayMatch(target: string | ReplayFilter): (d: QueuedDelivery, job: Job) => boolean {
  if (typeof target === 'string') return (d) => d.id === target;
  return (d, job) =>
    (target.type === undefined || d.type === target.type) &&
    (target.since === undefined || (job.finishedOn ?? 0) >= target.since.getTime());
}
