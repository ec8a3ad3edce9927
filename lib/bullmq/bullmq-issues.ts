import type { Job, Queue } from 'bullmq';
import { type InboxIssue, issueRefsOf, issueTally, SAMPLES } from '../inbox/inbox-issue';
import { isQueuedDelivery } from '../inbox/queued-delivery';
import { deadLetterOf, PAGE } from './bullmq-dead-letters';
import type { IssueTallyStore } from './redis-issue-tally';

/**
 * How many dead letters one reconcile step checks each way, in the `onIssue` check (one worker of
 * the queue, every `issueCheckMs`) and in an `issues()` read: its cost is bounded by this, not by
 * how many dead letters there are (about 80 ms and 12 ms at 100 000, docs/performance.md).
 */
export const RECONCILE_STEP = { check: 500, read: 100 } as const;

/**
 * One failed set's issues as read for a query (its newest `limit`), and a way to read any others
 * of it by key: an issue past one set's `limit` can be among the merged newest (mergeIssues).
 */
export interface IssueReading {
  issues: InboxIssue[];
  pick(keys: readonly string[]): Promise<InboxIssue[]>;
}

/** A tally's issues for `query`, the others by key from the tally as it stands then. */
async function tallyReading(
  tally: IssueTallyStore,
  query: { since?: Date | undefined; limit: number },
): Promise<IssueReading> {
  return { issues: await tally.read(query), pick: (keys) => tally.pick(keys) };
}

/**
 * Counts a failed job in the tally as the dead letter it is now. A job that is not a queued
 * delivery (a queue can hold anything) is tallied in no issue, so the reconcile does not read it
 * again; one no longer failed (replayed meanwhile) is left out.
 */
export async function tallyJob(tally: IssueTallyStore, job: Job): Promise<void> {
  if (job.id === undefined || job.finishedOn === undefined || job.failedReason === undefined) return;
  if (!isQueuedDelivery(job.data)) return tally.record(job.id, job.finishedOn, '', '', []);
  const letter = deadLetterOf(job);
  await tally.record(job.id, job.finishedOn, letter.delivery.id, letter.delivery.type, issueRefsOf(letter));
}

/**
 * The queue's issues from the tally (its cost in issues read, not in dead letters), after one
 * reconcile step of `step` each way. Until the tally has been filled once (a queue whose dead letters predate
 * it), the failed set is walked a page at a time as before, tallying each job, and the tally is
 * marked complete when the walk reaches the end.
 */
export async function failedIssues(
  queue: Queue,
  tally: IssueTallyStore,
  query: { since?: Date | undefined; limit: number },
  step: number,
): Promise<IssueReading> {
  if (!(await tally.complete())) return walkFailed(queue, tally, query);
  // Bookkeeping: a read that cannot write (a read-only replica) still reads the tally.
  await reconcileTally(queue, tally, step).catch(() => undefined);
  return tallyReading(tally, query);
}

/**
 * The issues without writing anything, for a read-only inbox (the CLI's): the tally as it stands
 * once filled (not reconciled), else the walk, tallying nothing.
 */
export async function readIssues(
  queue: Queue,
  tally: IssueTallyStore,
  query: { since?: Date | undefined; limit: number },
): Promise<IssueReading> {
  return (await tally.complete()) ? tallyReading(tally, query) : walkFailed(queue, undefined, query);
}

/**
 * One step of keeping the tally true to BullMQ's failed set, whatever changed it without telling
 * us (a job removed or retried through BullMQ or bull-board, a worker killed between failing a job
 * and tallying it, a replay killed between putting a job back and untallying it): `step` failed
 * jobs not tallied are tallied, and `step` tallied ones no longer failed are untallied. Each walk
 * resumes where the last left off, so the whole tally is checked every `dead / step` steps.
 */
async function reconcileTally(queue: Queue, tally: IssueTallyStore, step: number): Promise<void> {
  const at = await tally.cursor();
  const failed = await queue.getRanges(['failed'], at.failed, at.failed + step - 1, true);
  const missing = await tally.untallied(failed);
  const jobs = await Promise.all(missing.map((id) => queue.getJob(id)));
  await Promise.all(jobs.map((job) => (job === undefined ? undefined : tallyJob(tally, job))));
  const tallied = await tally.range(at.tallied, at.tallied + step - 1);
  const states = await Promise.all(tallied.map(([id]) => queue.getJobState(id)));
  // Only while it is still tallied as failed then: a job failing again meanwhile stays counted.
  const removed = await tally.remove(tallied.filter((_, i) => states[i] !== 'failed'));
  await tally.setCursor({
    failed: failed.length < step ? 0 : at.failed + failed.length,
    tallied: tallied.length < step ? 0 : at.tallied + tallied.length - removed,
  });
}

/**
 * BullMQ's failed set grouped into issues, read a page at a time (memory holds one page and the
 * issues), each job tallied as it is read when a tally is given: about one `getFailed` page per 500 dead letters.
 */
async function walkFailed(
  queue: Queue,
  tally: IssueTallyStore | undefined,
  query: { since?: Date | undefined; limit: number },
): Promise<IssueReading> {
  const issues = issueTally();
  // Not tallied (a read-only replica): the walk still answers, and the next read walks again.
  let tallied = tally !== undefined;
  for (let start = 0; ; start += PAGE) {
    const page = await queue.getFailed(start, start + PAGE - 1);
    if (tallied)
      await Promise.all(page.map((job) => tallyJob(tally!, job))).catch(() => {
        tallied = false;
      });
    for (const job of page) {
      // Replayed between the set's read and the job's: no longer a dead letter (its failure cleared).
      if (!isQueuedDelivery(job.data) || job.finishedOn === undefined || job.failedReason === undefined)
        continue;
      const letter = deadLetterOf(job);
      const at = letter.failedAt ?? letter.receivedAt;
      const group = { count: 1, firstSeen: at, lastSeen: at, sampleEventIds: [letter.delivery.id] };
      for (const ref of issueRefsOf(letter)) issues.add(letter.delivery.type, ref, group);
    }
    if (page.length < PAGE) {
      if (tallied) await tally!.markComplete().catch(() => undefined);
      // The walk counted every issue (up to MAX_TRACKED_ISSUES): any other is picked from them.
      return {
        issues: issues.list(query),
        pick: (keys) => {
          const wanted = new Set(keys);
          return Promise.resolve(issues.list({ limit: Infinity }).filter((i) => wanted.has(i.key)));
        },
      };
    }
  }
}

/**
 * The issues of several failed sets (the queue's and its quarantine queue's) as one list: an issue
 * in both is one, its counts added, so `since` and `limit` are applied to the sums, as a single
 * tally would. Each set is read for the same query: an issue among the merged newest `limit` is
 * among the newest `limit` of the set holding its newest failure (a sum is never older than its
 * parts), so the union of the readings holds every key the answer needs; each set's part of a key
 * it did not list (past its `limit`, or older than `since` there) is then picked by key, so no sum
 * is counted short. Cost: each set reads at most `limit` issues, then at most the others' `limit`
 * again by key.
 */
export async function mergeIssues(
  readings: readonly IssueReading[],
  query: { since?: Date | undefined; limit: number },
): Promise<InboxIssue[]> {
  const keys = new Set(readings.flatMap((r) => r.issues.map((i) => i.key)));
  const lists = await Promise.all(
    readings.map(async ({ issues, pick }) => {
      const listed = new Set(issues.map((i) => i.key));
      const rest = [...keys].filter((k) => !listed.has(k));
      return rest.length === 0 ? issues : [...issues, ...(await pick(rest))];
    }),
  );
  const byKey = new Map<string, InboxIssue>();
  for (const issue of lists.flat()) {
    const had = byKey.get(issue.key);
    if (had === undefined) {
      byKey.set(issue.key, issue);
      continue;
    }
    const [newer, older] = issue.lastSeen > had.lastSeen ? [issue, had] : [had, issue];
    byKey.set(issue.key, {
      ...newer,
      count: had.count + issue.count,
      firstSeen: newer.firstSeen < older.firstSeen ? newer.firstSeen : older.firstSeen,
      sampleEventIds: [...new Set([...newer.sampleEventIds, ...older.sampleEventIds])].slice(0, SAMPLES),
    });
  }
  return [...byKey.values()]
    .filter((i) => query.since === undefined || i.lastSeen >= query.since)
    .sort((a, b) => b.lastSeen.getTime() - a.lastSeen.getTime() || (a.key < b.key ? -1 : 1))
    .slice(0, query.limit);
}
