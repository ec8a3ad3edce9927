import type { Job, Queue } from 'bullmq';
import { deadLetterReason } from '../inbox/worker/read-queued-event';
import type { DeadLetter, ReplayFilter } from '../inbox/inbox';
import { issueRefsOf } from '../inbox/inbox-issue';
import {
  isQueuedDelivery,
  jobHandlersOf,
  replayStates,
  withoutHandlers,
  type JobHandlers,
  type QueuedDelivery,
} from '../inbox/queued-delivery';
import { MAX_DEAD_LETTERS } from '../inbox/check-dead-letter-query';
import { checkReplayHandlers } from '../inbox/check-replay-handlers';
import type { EventRouter } from '../events/event-router';
import type { ReplayOptions, ReplayPage } from '../inbox/replay-pages';
import type { IssueTallyStore } from './redis-issue-tally';

/** How many failed jobs one read brings back: memory holds one page, however many there are. */
export const PAGE = 500;

/** BullMQ's failed set read as dead letters: the jobs holding a queued delivery that `match`es, newest first. */
async function failedJobs(
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

/**
 * Puts one failed job back with fresh tries; false when it was no longer failed (replayed meanwhile).
 * A job BullMQ failed itself (it stalled) may still hold an earlier replay's `runOnly`: a `plain`
 * replay drops it, so every handler not yet done runs.
 */
async function retried(job: Job, plain = true): Promise<boolean> {
  try {
    if (plain && jobHandlersOf(job.data).runOnly !== undefined) {
      const { runOnly: _only, ...data } = job.data as QueuedDelivery & JobHandlers;
      await job.updateData(data);
    }
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    return true;
  } catch {
    return false;
  }
}

/** A put-back job's id and the failure it was put back from, read before `retry` clears it. */
type PutBack = readonly [id: string, failedAt: number | undefined];

/**
 * Takes the jobs a page put back out of the issue tally, in one call: only the failure each was
 * replayed from, so one that already failed again stays counted. Not done (Redis away), the
 * reconcile untallies them within a pass.
 */
async function untally(tally: IssueTallyStore, back: readonly PutBack[]): Promise<number> {
  return tally.remove(back).catch(() => 0);
}

/** One page of a replay's source: its jobs still failed, and how many entries it read. */
interface SourcePage {
  jobs: Job[];
  /** Entries read (some may be no job, or no longer failed): a full page means more may follow. */
  read: number;
  /** The oldest failure time the page reached, when known. */
  oldest: number | undefined;
}

/**
 * The pages of a replay of the failed jobs `target` names, one a call (`replayPages` walks them),
 * never holding more than one page. By issue, once the tally is filled, the issue's own tallied
 * job ids are paged (its cost in that issue's letters, not in all of them); otherwise BullMQ's
 * failed set. A replayed job leaves either, so the next page starts after the entries that stayed.
 * Both are ordered by failure time, newest first: a `since` walk stops at the first page reaching
 * older ones. Each job is put back by `putBack` (false when it was no longer failed): by default
 * one script of BullMQ's (`retry`), so a stop between pages leaves none half replayed.
 */
export function failedReplayPages(
  queue: Queue,
  tally: IssueTallyStore,
  target: string | ReplayFilter,
  options: ReplayOptions,
  putBack: (job: Job) => Promise<boolean> = (job) => retried(job),
): () => Promise<ReplayPage> {
  const match = replayMatch(target);
  const since = typeof target === 'string' ? undefined : target.since?.getTime();
  const issue = typeof target === 'string' ? undefined : target.issue;
  let byIssue: Promise<boolean> | undefined;
  let start = 0;
  const failedPage = async (): Promise<SourcePage> => {
    const jobs = await queue.getFailed(start, start + PAGE - 1);
    // Read before the page is put back: a retry clears the job's failure time.
    return { jobs, read: jobs.length, oldest: jobs.at(-1)?.finishedOn };
  };
  const issuePage = async (key: string): Promise<SourcePage> => {
    const ids = await tally.issueRange(key, start, start + PAGE - 1);
    const jobs = await Promise.all(ids.map(([id]) => queue.getJob(id)));
    return {
      // Tallied but gone or put back meanwhile (the reconcile untallies it): none to replay.
      jobs: jobs.filter((job): job is Job => job?.finishedOn !== undefined && job.failedReason !== undefined),
      read: ids.length,
      oldest: ids.at(-1)?.[1],
    };
  };
  return async () => {
    byIssue ??= issue === undefined ? Promise.resolve(false) : tally.complete();
    const tallied = await byIssue;
    const page = tallied ? await issuePage(issue!) : await failedPage();
    const matching = page.jobs.filter((job) => isQueuedDelivery(job.data) && match(job.data, job));
    let stayed = page.jobs.length - matching.length;
    const back: PutBack[] = [];
    if (options.dryRun === true) stayed += matching.length;
    else
      // Together, pipelined on the queue's connection: each job by its own script all the same.
      await Promise.all(
        matching.map(async (job) => {
          const failedAt = job.finishedOn;
          if (await putBack(job)) back.push([job.id!, failedAt]);
          else if (await job.isFailed()) stayed++;
        }),
      );
    const untallied = await untally(tally, back);
    // The issue's set loses only what was untallied; the failed set, every job put back.
    start += tallied ? page.read - untallied : stayed;
    const done =
      page.read < PAGE || (since !== undefined && page.oldest !== undefined && page.oldest < since);
    return { matched: matching.length, replayed: back.length, done };
  };
}

/**
 * Replays the dead letters of event `id` to run only the handlers `names`: every one is checked
 * first (nothing is replayed if a name is unknown), then each job's data says so (its named
 * handlers not yet done, `runOnly`) and it is put back.
 */
export async function replayHandlers(
  queue: Queue,
  tally: IssueTallyStore,
  id: string,
  names: readonly string[],
  routers: Iterable<EventRouter>,
): Promise<number> {
  const jobs = await failedJobs(queue, (d) => d.id === id, MAX_DEAD_LETTERS);
  for (const job of jobs) checkReplayHandlers(deadLetterOf(job), names, routers);
  const back: PutBack[] = [];
  for (const job of jobs) {
    const failedAt = job.finishedOn;
    const { handlers } = jobHandlersOf(job.data);
    const data = withoutHandlers(job.data as QueuedDelivery);
    await job.updateData({ ...data, handlers: replayStates(handlers, names), runOnly: names });
    if (await retried(job, false)) back.push([job.id!, failedAt]);
  }
  await untally(tally, back);
  return back.length;
}

/** Whether handler `name` ran on a failed job without a recorded success. */
export function handlerFailed(job: Job, name: string): boolean {
  return jobHandlersOf(job.data).handlers?.[name]?.ok === false;
}

export function deadLetterOf(job: Job): DeadLetter {
  const delivery = withoutHandlers(job.data as QueuedDelivery);
  const { handlers } = jobHandlersOf(job.data);
  return {
    ...(handlers === undefined ? {} : { handlers }),
    delivery,
    attempts: job.attemptsMade,
    lastError: job.failedReason ?? null,
    receivedAt: new Date(delivery.receivedAt),
    failedAt: job.finishedOn === undefined ? null : new Date(job.finishedOn),
    ...deadLetterReason(delivery, job.failedReason ?? null),
  };
}

/** Which failed jobs a replay target names: one event by id, or a type, failure time and issue. */
function replayMatch(target: string | ReplayFilter): (d: QueuedDelivery, job: Job) => boolean {
  if (typeof target === 'string') return (d) => d.id === target;
  return (d, job) =>
    (target.type === undefined || d.type === target.type) &&
    (target.since === undefined || (job.finishedOn ?? 0) >= target.since.getTime()) &&
    (target.issue === undefined || issueRefsOf(deadLetterOf(job)).some((r) => r.key === target.issue));
}
