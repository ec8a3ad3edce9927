import type { ConnectionOptions, Queue } from 'bullmq';
import { checkOptionKeys } from '../check-option-keys';
import type { EventRouter } from '../events/event-router';
import type { Inbox, InboxStatus, InboxWorkerOptions, ReplayFilter } from '../inbox/inbox';
import { jobIdFor, withoutHandlers, type QueuedDelivery } from '../inbox/queued-delivery';
import type { Job } from 'bullmq';
import { quarantineQueue } from './quarantine-queue';
import { replayPages, type ReplayOptions, type ReplayPage } from '../inbox/replay-pages';
import { deadLetterOf, failedReplayPages, handlerFailed, replayHandlers } from './bullmq-dead-letters';
import { failedCursor, failedPage, mergeFailedPages } from './failed-page';
import {
  checkDeadLettersQuery,
  checkIssuesQuery,
  checkReplayOptions,
  checkReplayTarget,
  MAX_ISSUES,
} from '../inbox/check-dead-letter-query';
import { failedIssues, mergeIssues, RECONCILE_STEP, tallyJob } from './bullmq-issues';
import { redisIssueTally, type TallyClient } from './redis-issue-tally';
import { checkIssueAlerts, watchIssues } from '../inbox/issue-watch';
import { redisIssueLedger } from './redis-issue-ledger';
import { rateLimitedLog } from '../rate-limited-log';
import { resolveLogger, type Logger } from '../logger';
import { OptionsError } from '../options-error';
import { checkRedisDurability } from './check-redis-durability';
import { loadBullmq } from './load-bullmq';
import { checkIoredis, checkWorkerConnection, isClient, redisConnection } from './redis-connection';
import { KEEP_COMPLETED, startBullmqWorker } from './bullmq-worker';
import { checkMaxDepth, depthGate } from '../inbox/inbox-full';
import { fastStringPrototype } from '../fast-string-prototype';

/** Options of {@link bullmqInbox}: a connection or a queue of yours, and the queue's name. */
export interface BullmqInboxOptions {
  /** Where the queue lives: ioredis options, an ioredis client, or a `redis://` URL. Give this or `queue`. */
  connection?: ConnectionOptions | string;
  /**
   * A BullMQ `Queue` you made: its name, connection and key `prefix` are used, so the worker sees
   * the jobs it adds. Give this or `connection`.
   */
  queue?: Queue;
  /** The queue's name (no `:`). Defaults to `'service-webhooks'`; with `queue`, that queue's name (no other). */
  name?: string;
  /**
   * How long a worker's hold on a job lasts without renewal (a killed worker's job runs again after
   * it). Defaults to `30_000` ms, BullMQ's own.
   */
  lockDurationMs?: number;
  /**
   * How many tries each job is given, stored on the job when it is enqueued as BullMQ's own
   * `attempts`, so BullMQ counts them and its dashboards (bull-board, Taskforce) show them. A
   * worker's `attempts` defaults to this; a worker given more is refused (a job's tries are fixed
   * when it is added), one given fewer dead-letters at its own. Defaults to `13`, the workers' default.
   */
  attempts?: number;
  /**
   * How many times a job may lose its worker mid-try (killed, or its event loop blocked past
   * `lockDurationMs`) and run again; the next time, BullMQ fails it into the dead letters ("job
   * stalled more than allowable limit"), so a job that kills its worker stops after a few. Such stops
   * do not spend `attempts`. Defaults to `2`.
   */
  maxStalledCount?: number;
  /** Where the Redis settings warnings go. Defaults to the console. */
  logger?: Logger | false;
  /**
   * The most events the queue may hold (waiting and delayed) before the receiver stops queueing:
   * past it, a delivery is answered `503` + `Retry-After` (shed, `queue-depth`) and the Service
   * retries it, so Redis memory stays bounded by a number you choose. The depth is read at most once
   * a second, so a burst may pass it by what arrives in that second. Defaults to none (no bound).
   */
  maxDepth?: number;
}

const KEYS = [
  'connection',
  'queue',
  'name',
  'lockDurationMs',
  'attempts',
  'maxStalledCount',
  'logger',
  'maxDepth',
];
const WHERE = 'bullmqInbox';

/**
 * An {@link Inbox} on BullMQ: enqueued jobs are acknowledged by Redis (warned about once when its
 * `appendonly` or `maxmemory-policy` can lose them), run by `startWorker` with retries; exhausted
 * jobs stay in BullMQ's failed set, which is the dead letters, with the failed set of the queue
 * `<name>-quarantine`, where quarantined events are failed before the receiver answers.
 */
export function bullmqInbox(options: BullmqInboxOptions): Inbox {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      'takes options: bullmqInbox({ connection }) or bullmqInbox({ queue })',
    );
  checkOptionKeys(options, KEYS, WHERE);
  if ((options.connection === undefined) === (options.queue === undefined))
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      'give exactly one of connection (ioredis options, a client or a redis:// URL) or queue (a BullMQ Queue)',
    );
  if (options.queue !== undefined && !(options.queue instanceof loadBullmq().Queue))
    throw new OptionsError('ERR_SW_OPTION', WHERE, "queue must be a Queue from 'bullmq'");
  if (options.queue !== undefined && options.name !== undefined && options.name !== options.queue.name)
    throw new OptionsError(
      'ERR_SW_NAME',
      WHERE,
      `name "${String(options.name)}" differs from the queue's own ("${options.queue.name}"): leave name out with queue`,
    );
  const name = options.name ?? options.queue?.name ?? 'service-webhooks';
  if (typeof name !== 'string' || name === '' || name.includes(':'))
    throw new OptionsError(
      'ERR_SW_NAME',
      WHERE,
      `name must be a non-empty string without ":" (got ${String(name)})`,
    );
  const lockDuration = options.lockDurationMs ?? 30_000;
  if (!Number.isSafeInteger(lockDuration) || lockDuration < 1000)
    throw new OptionsError(
      'ERR_SW_TIMEOUT',
      WHERE,
      'lockDurationMs must be a whole number of milliseconds ≥ 1000',
    );
  // The workers' own default: a job gets as many tries as a worker given nothing gives it.
  const attempts = wholeOption(options.attempts, 'attempts', 13, 1);
  const maxStalledCount = wholeOption(options.maxStalledCount, 'maxStalledCount', 2, 0);
  const maxDepth = checkMaxDepth(options.maxDepth, WHERE);
  const log = resolveLogger(options.logger, WHERE);
  const warn = rateLimitedLog(log);
  const connection =
    options.queue?.opts.connection ?? redisConnection(options.connection as ConnectionOptions | string);
  if (options.queue === undefined && !isClient(connection)) checkIoredis();
  checkWorkerConnection(connection);
  const owned = options.queue === undefined;
  const queue = options.queue ?? new (loadBullmq().Queue)(name, { connection });
  // The queue's client has loaded ioredis, which leaves String.prototype slow for the whole process.
  fastStringPrototype();
  // Without a listener BullMQ prints every reconnection error; ours go to the logger, rate-limited.
  if (owned)
    queue.on('error', (error) =>
      warn('error', 'bullmq-queue', { err: error }, 'the BullMQ queue reported an error'),
    );
  // Read once, at the first enqueue: the settings matter to what the receiver acknowledges.
  let checked: Promise<void> | undefined;
  const at = {
    name,
    connection,
    prefix: queue.opts.prefix ?? 'bull',
    skipVersionCheck: queue.opts.skipVersionCheck,
    rateLimit: (expireTimeMs: number) => queue.rateLimit(expireTimeMs),
  };
  /**
   * Every job's options but its id, built once: BullMQ copies what it is given. What is kept of a
   * finished job is the workers' (`KEEP_COMPLETED`, and every failed one), named on the job only on
   * an app's Queue, whose `defaultJobOptions` would otherwise decide it.
   */
  const jobOptions = {
    // BullMQ counts the tries and fails the job when they are spent; the worker's strategy chooses
    // each delay.
    attempts,
    backoff: { type: 'service-webhooks' },
    ...(owned ? {} : { removeOnComplete: KEEP_COMPLETED, removeOnFail: false }),
  };
  // Our keys on the queue's own connection, beside BullMQ's.
  const client = () => (queue.getBackend() as unknown as { client: Promise<never> }).client;
  const tally = redisIssueTally(client as () => Promise<TallyClient>, at.prefix, name);
  const quarantined = quarantineQueue(
    { ...at, skipMetasUpdate: queue.opts.skipMetasUpdate, lockDuration },
    client as () => Promise<TallyClient>,
  );
  /** Every issue of both failed sets, merged, then `query` applied to the sums. */
  const issuesOf = async (query: { since?: Date | undefined; limit: number }, step: number) =>
    mergeIssues(
      await Promise.all([
        failedIssues(queue, tally, query, step),
        failedIssues(quarantined.queue(), quarantined.tally, query, step),
      ]),
      query,
    );
  /**
   * Moves a quarantined dead letter into the queue: added first (its id, so a second add, or one
   * the queue holds already, adds nothing), then removed, so a stop between the two leaves it in
   * both (the next replay's add is a no-op and removes it), never in neither.
   */
  async function moveToQueue(job: Job): Promise<boolean> {
    try {
      const delivery = withoutHandlers(job.data as QueuedDelivery);
      await queue.add(delivery.type, delivery, { ...jobOptions, jobId: job.id! });
      await job.remove();
      return true;
    } catch {
      return false;
    }
  }
  const workers = new Set<{ close(): Promise<void> }>();
  /** The routers of the workers started here: a replay's handler names are checked against them. */
  const routers = new Set<EventRouter>();
  const roomFor =
    maxDepth === undefined
      ? undefined
      : depthGate(maxDepth, async () => {
          const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed');
          return (counts.wait ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0);
        });

  /** A job id that exists already makes add() a no-op: a redelivery never enqueues twice. */
  const added = (delivery: QueuedDelivery) =>
    queue.add(delivery.type, delivery, {
      ...jobOptions,
      jobId: jobIdFor(delivery.key),
    }) as Promise<unknown> as Promise<void>;

  return {
    engine: 'bullmq',
    name,
    // Not an async function: with no depth to check, the receiver waits on add()'s own promise, no
    // frame and no promise of ours around it. What it resolves with is not part of the answer.
    enqueue(delivery) {
      try {
        checked ??= checkRedisDurability(queue, log);
        if (roomFor !== undefined) return roomFor().then(() => added(delivery));
        return added(delivery);
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
    async quarantine(delivery) {
      checked ??= checkRedisDurability(queue, log);
      // A key the queue holds (queued, run, or dead) is that event already: no letter is added.
      await quarantined.quarantine(delivery, async (id) => (await queue.getJob(id)) !== undefined);
    },
    async startWorker(router: EventRouter, workerOptions?: InboxWorkerOptions) {
      const alerts = checkIssueAlerts(workerOptions, 'inbox.startWorker');
      // What a receiver killed mid-quarantine left is failed now, not at the next quarantine.
      await quarantined.sweep();
      const started = await startBullmqWorker(
        at,
        { lockDuration, maxStalledCount },
        router,
        workerOptionsFor(workerOptions, attempts),
        (job) => tallyJob(tally, job),
      );
      const watch =
        alerts &&
        watchIssues({
          ...alerts,
          read: () => issuesOf({ limit: MAX_ISSUES }, RECONCILE_STEP.check),
          ledger: redisIssueLedger(client, at.prefix, name),
          log: resolveLogger(workerOptions?.logger, 'inbox.startWorker'),
        });
      const worker = { close: () => Promise.all([watch?.close(), started.close()]).then(() => undefined) };
      workers.add(worker);
      routers.add(router);
      return { close: () => worker.close().finally(() => workers.delete(worker)) };
    },
    async deadLetters(options) {
      const { limit, type, handler, after, before } = checkDeadLettersQuery(options);
      const match = (d: QueuedDelivery, job: Job) =>
        (type === undefined || d.type === type) && (handler === undefined || handlerFailed(job, handler));
      const [failed, held] = await Promise.all([
        failedPage(queue, match, limit, { after, before }),
        failedPage(quarantined.queue(), match, limit, { after, before }),
      ]);
      const jobs = mergeFailedPages(
        [failed.map((job) => ({ job, quarantined: false })), held.map((job) => ({ job, quarantined: true }))],
        limit,
        before !== undefined,
      );
      // A quarantined letter was failed by its receiver, no worker's try: none ran.
      return jobs.map(({ job, quarantined: held }) => ({
        ...deadLetterOf(job),
        ...(held ? { attempts: 0 } : {}),
        cursor: failedCursor(job),
      }));
    },
    async issues(query) {
      return issuesOf(checkIssuesQuery(query), RECONCILE_STEP.read);
    },
    async replay(given: string | ReplayFilter, options?: ReplayOptions) {
      const target = checkReplayTarget(given);
      const { pages, handlers } = checkReplayOptions(target, options);
      if (handlers !== undefined && typeof target === 'string')
        return replayHandlers(queue, tally, target, handlers, routers);
      // The queue's dead letters, then the quarantined ones (moved into the queue, read again there):
      // the quarantine queue's pages only when it holds any, so an empty one reports no page.
      const pagers = [
        failedReplayPages(queue, tally, target, pages),
        failedReplayPages(quarantined.queue(), quarantined.tally, target, pages, moveToQueue),
      ];
      return replayPages(async (): Promise<ReplayPage> => {
        const page = await pagers[0]!();
        if (!page.done || pagers.length === 1) return page;
        pagers.shift();
        return { ...page, done: (await quarantined.queue().getFailedCount()) === 0 };
      }, pages);
    },
    async status(): Promise<InboxStatus> {
      const [counts, held] = await Promise.all([
        queue.getJobCounts('wait', 'delayed', 'prioritized', 'active', 'failed'),
        quarantined.queue().getFailedCount(),
      ]);
      const age = (jobs: { timestamp: number }[]) => {
        const times = jobs.map((j) => j.timestamp).filter((t) => Number.isFinite(t));
        return times.length === 0 ? null : Math.max(0, Date.now() - Math.min(...times));
      };
      return {
        paused: await queue.isPaused(),
        waiting: (counts.wait ?? 0) + (counts.prioritized ?? 0),
        delayed: counts.delayed ?? 0,
        active: counts.active ?? 0,
        dead: (counts.failed ?? 0) + held,
        oldestAgeMs: age(await queue.getJobs(['wait', 'prioritized'], 0, 0, true)),
        oldestDelayedAgeMs: age(await queue.getJobs(['delayed'], 0, 0, true)),
      };
    },
    // BullMQ's own pause: a flag in the queue's meta key that every worker's fetch script reads.
    pause: () => queue.pause(),
    resume: () => queue.resume(),
    async close() {
      await Promise.allSettled([...workers].map((w) => w.close()));
      // A check still reading would reconnect a closed queue; it is given a moment to finish.
      if (checked !== undefined)
        await Promise.race([checked, new Promise((r) => setTimeout(r, 1000).unref())]);
      await quarantined.close();
      if (owned) await queue.close();
    },
  };
}

function wholeOption(value: unknown, key: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      `${key} must be a whole number ≥ ${min} (got ${String(value)})`,
    );
  return value;
}

/**
 * The worker's options with the inbox's `attempts` as their default. More than the jobs were given
 * is refused: BullMQ would fail them at their own, and the worker's setting would silently not hold.
 */
function workerOptionsFor(
  given: InboxWorkerOptions | undefined,
  attempts: number,
): InboxWorkerOptions | undefined {
  // Anything but an object is the worker core's to refuse, with its own message.
  if (typeof given !== 'object' || given === null) return given ?? { attempts };
  if (typeof given.attempts === 'number' && given.attempts > attempts)
    throw new OptionsError(
      'ERR_SW_OPTION',
      'inbox.startWorker',
      `attempts ${given.attempts} is more than the ${attempts} this inbox gives each job it enqueues (BullMQ fixes a job's attempts when it is added): give bullmqInbox({ attempts: ${given.attempts} }) where jobs are enqueued and here`,
    );
  return { ...given, attempts: given.attempts ?? attempts };
}
