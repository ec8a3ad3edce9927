import type { Queue } from 'bullmq';
import { type InboxIssue, issueRefsOf, issueTally } from '../inbox/inbox-issue';
import { isQueuedDelivery } from '../inbox/queued-delivery';
import { deadLetterOf, PAGE } from './bullmq-dead-letters';

/**
 * BullMQ's failed set grouped into issues, read a page at a time: memory holds one page and the
 * issues, however many dead letters there are. Every dead letter is read once (BullMQ keeps no
 * index by error), so a read costs about one `getFailed` page per 500 dead letters.
 */
export async function failedIssues(
  queue: Queue,
  query: { since?: Date | undefined; limit: number },
): Promise<InboxIssue[]> {
  const tally = issueTally();
  for (let start = 0; ; start += PAGE) {
    const page = await queue.getFailed(start, start + PAGE - 1);
    for (const job of page) {
      // Replayed between the set's read and the job's: no longer a dead letter (its failure cleared).
      if (!isQueuedDelivery(job.data) || job.finishedOn === undefined || job.failedReason === undefined)
        continue;
      const letter = deadLetterOf(job);
      const at = letter.failedAt ?? letter.receivedAt;
      const group = { count: 1, firstSeen: at, lastSeen: at, sampleEventIds: [letter.delivery.id] };
      for (const ref of issueRefsOf(letter)) tally.add(letter.delivery.type, ref, group);
    }
    if (page.length < PAGE) return tally.list(query);
  }
}
