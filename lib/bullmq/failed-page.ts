import type { Job, Queue } from 'bullmq';
import { encodeCursor, type DeadLetterPosition } from '../inbox/dead-letter-cursor';
import { OptionsError } from '../options-error';
import { isQueuedDelivery, type QueuedDelivery } from '../inbox/queued-delivery';
import { PAGE } from './bullmq-dead-letters';

/**
 * Whether failed job `a` comes after position `b` in BullMQ's failed set read newest first
 * (`ZREVRANGE`): a smaller score (its `finishedOn`), or the same score and a member (its id) smaller
 * byte by byte.
 */
function comesAfter(
  a: DeadLetterPosition & { failedAt: number },
  b: DeadLetterPosition & { failedAt: number },
): boolean {
  if (a.failedAt !== b.failedAt) return a.failedAt < b.failedAt;
  return Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)) < 0;
}

function positionOf(job: Job): DeadLetterPosition & { failedAt: number } {
  return { failedAt: job.finishedOn ?? 0, id: String(job.id) };
}

/** A failed job's cursor: where it stands in the set, whatever moves around it. */
export function failedCursor(job: Job): string {
  return encodeCursor(positionOf(job));
}

function checkPosition(
  position: DeadLetterPosition,
  name: string,
): DeadLetterPosition & { failedAt: number } {
  if (typeof position.failedAt === 'number') return { failedAt: position.failedAt, id: position.id };
  throw new OptionsError(
    'ERR_SW_OPTION',
    'inbox.deadLetters',
    `${name} is the cursor of another inbox's dead letter (a pg-boss one?); pass the cursor a dead letter of this inbox gave`,
  );
}

/**
 * The first index of the failed set (newest first) whose job comes after `anchor` (`strictly`), or
 * is it or after it: a binary search reading one job a probe, about 17 reads at 100 000.
 */
async function firstIndex(
  queue: Queue,
  anchor: DeadLetterPosition & { failedAt: number },
  strictly: boolean,
): Promise<number> {
  let low = 0;
  let high = await queue.getFailedCount();
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    // A job whose hash is gone leaves a hole: the next one stands for it.
    const [job] = await queue.getFailed(middle, Math.min(middle + 3, high - 1));
    const beyond =
      job === undefined ||
      comesAfter(positionOf(job), anchor) ||
      (!strictly && positionOf(job).id === anchor.id && positionOf(job).failedAt === anchor.failedAt);
    if (beyond) high = middle;
    else low = middle + 1;
  }
  return low;
}

/**
 * One page of the failed jobs holding a queued delivery that `match`es, newest first: from the
 * newest, after the job at `after`, or the `limit` nearest before the job at `before`. Reads a page of
 * the set at a time, so memory holds at most `limit` jobs and one page.
 */
export async function failedPage(
  queue: Queue,
  match: (d: QueuedDelivery, job: Job) => boolean,
  limit: number,
  at: { after?: DeadLetterPosition | undefined; before?: DeadLetterPosition | undefined },
): Promise<Job[]> {
  const matches = (job: Job) => isQueuedDelivery(job.data) && match(job.data, job);
  const found: Job[] = [];
  if (at.before !== undefined) {
    const before = checkPosition(at.before, 'before');
    // Nearest first, walking back towards the newest.
    for (
      let end = (await firstIndex(queue, before, false)) - 1;
      end >= 0 && found.length < limit;
      end -= PAGE
    ) {
      const page = await queue.getFailed(Math.max(0, end - PAGE + 1), end);
      for (const job of page.reverse())
        if (found.length < limit && comesAfter(before, positionOf(job)) && matches(job)) found.push(job);
    }
    return found.reverse();
  }
  const after = at.after === undefined ? undefined : checkPosition(at.after, 'after');
  for (
    let start = after === undefined ? 0 : await firstIndex(queue, after, true);
    found.length < limit;
    start += PAGE
  ) {
    const page = await queue.getFailed(start, start + PAGE - 1);
    // The set may have moved since the search: a job not after the cursor is never given twice.
    for (const job of page)
      if ((after === undefined || comesAfter(positionOf(job), after)) && matches(job)) found.push(job);
    if (page.length < PAGE) break;
  }
  return found.slice(0, limit);
}

/**
 * The dead letters of several failed sets (the queue's and its quarantine queue's) as one page in
 * the order of one set: each set's page read with the same cursor holds every letter of the merged
 * page it has, so the merged page is the `limit` newest of them all (the `limit` nearest to `before`
 * with it), each letter reached once whichever way the pages are walked.
 */
export function mergeFailedPages<T extends { job: Job }>(
  pages: T[][],
  limit: number,
  backwards: boolean,
): T[] {
  const all = pages.flat().sort((a, b) => {
    const [x, y] = [positionOf(a.job), positionOf(b.job)];
    if (comesAfter(x, y)) return 1;
    return comesAfter(y, x) ? -1 : 0;
  });
  return backwards ? all.slice(Math.max(0, all.length - limit)) : all.slice(0, limit);
}
