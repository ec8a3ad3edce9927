import type { Job, Queue } from 'bullmq';
import type { DeadLetter, ReplayFilter } from '../inbox/inbox';
import { isQueuedDelivery, type QueuedDelivery } from '../inbox/queued-delivery';

const PAGE = 500;

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

export function deadLetterOf(job: Job): DeadLetter {
  const delivery = job.data as QueuedDelivery;
  return {
    delivery,
    attempts: job.attemptsMade,
    lastError: job.failedReason ?? null,
    receivedAt: new Date(delivery.receivedAt),
    failedAt: job.finishedOn === undefined ? null : new Date(job.finishedOn),
  };
}

/** Which failed jobs a replay target names: one event by id, or a type and failure time. */
export function replayMatch(target: string | ReplayFilter): (d: QueuedDelivery, job: Job) => boolean {
  if (typeof target === 'string') return (d) => d.id === target;
  return (d, job) =>
    (target.type === undefined || d.type === target.type) &&
    (target.since === undefined || (job.finishedOn ?? 0) >= target.since.getTime());
}
