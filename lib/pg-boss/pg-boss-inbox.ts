import { checkOptionKeys } from '../check-option-keys';
import { rateLimitedLog } from '../rate-limited-log';
import { resolveLogger, type Logger } from '../logger';
import type { EventRouter } from '../events/event-router';
import type { DeadLetter, Inbox, InboxWorkerOptions, ReplayFilter } from '../inbox/inbox';
import { DEAD_LETTER_RETENTION_SECONDS } from '../inbox/dead-letter-retention';
import { jobIdFor, replayStates, type QueuedDelivery } from '../inbox/queued-delivery';
import { OptionsError } from '../options-error';
import {
  checkDeadLettersQuery,
  checkIssuesQuery,
  checkReplayOptions,
  checkReplayTarget,
  MAX_DEAD_LETTERS,
  MAX_ISSUES,
} from '../inbox/check-dead-letter-query';
import { findIssues, inIssue } from './pg-boss-issue-reads';
import { checkIssueAlerts, watchIssues } from '../inbox/issue-watch';
import { pgIssueLedger } from './pg-issue-ledger';
import { checkReplayHandlers } from '../inbox/check-replay-handlers';
import { checkTransactions, inTransaction } from './in-transaction';
import { replayPages, type ReplayOptions } from '../inbox/replay-pages';
import { checkSchemaName } from './check-schema-name';
import { deadLetterFromData, type DeadLetterData } from './dead-letter-data';
import { issueRefsOf } from '../inbox/inbox-issue';
import { unreadableError } from '../inbox/worker/read-queued-event';
import { readDeadLetters } from './read-dead-letters';
import type * as PgBossModule from 'pg-boss' with { 'resolution-mode': 'import' };
import { loadPgBoss, type PgBoss } from './load-pg-boss';
import { checkReadSchema, databaseNow, findDeadJobs, readStatus, type DeadJob } from './pg-boss-reads';
import { startPgBossWorker, type PgBossWorker } from './pg-boss-worker';
import { isPaused, setPaused } from './pause-flag';
import { checkMaxDepth, depthGate } from '../inbox/inbox-full';

/** Options of {@link pgBossInbox}: a started pg-boss of yours or a connection string, and the queue's name. */
export interface PgBossInboxOptions {
  /**
   * A started `PgBoss` you made (it stays yours: `close()` leaves it running). Give this or
   * `connectionString`. A worker needs it on pg-boss's own pool or a `db` adapter with
   * `beginTransaction()`. No default.
   */
  boss?: PgBoss;
  /** A PostgreSQL connection string: the inbox makes, starts and stops its own `PgBoss`. Give this or `boss`. */
  connectionString?: string;
  /** The queue's name; dead letters go to `<name>.dead`. Defaults to `'service-webhooks'`. */
  name?: string;
  /**
   * pg-boss's schema: a plain SQL identifier (letters, digits, `_`). Defaults to `'pgboss'`; with
   * `boss`, give the schema that boss was made with.
   */
  schema?: string;
  /**
   * How long a try may hold its job before pg-boss takes it back (a killed worker's job runs again
   * after it). Defaults to `900` s, pg-boss's own.
   */
  expireInSeconds?: number;
  /**
   * Where the errors pg-boss reports go (a lost connection, a failed maintenance run), at most one
   * line a minute, with how many were held back. Only for the `PgBoss` the inbox makes (one given as
   * `boss` is yours to listen to). Defaults to the console; `false`: nowhere.
   */
  logger?: Logger | false;
  /**
   * The most events the queue may hold (waiting and delayed) before the receiver stops queueing:
   * past it, a delivery is answered `503` + `Retry-After` (shed, `queue-depth`) and the Service
   * retries it, so the table and the workers' lag stay bounded by a number you choose. The depth is
   * read at most once a second, so a burst may pass it by what arrives in that second. Defaults to
   * none (no bound).
   */
  maxDepth?: number;
}

const KEYS = ['boss', 'connectionString', 'name', 'schema', 'expireInSeconds', 'logger', 'maxDepth'];
const WHERE = 'pgBossInbox';
const NAME = /^[\w.-]{1,50}$/;
/** A finished job is kept this long: a day more than a dead letter, so a dead-lettered job outlives it. */
const TOMBSTONE_SECONDS = DEAD_LETTER_RETENTION_SECONDS + 24 * 60 * 60;
/** pg-boss never fails a job for good on its own: the worker decides when it is exhausted. */
const RETRY_LIMIT = 1_000_000;
/** How many dead letters a replay reads at once: memory stays bounded however many match. */
export const REPLAY_BATCH = 100;

/**
 * An {@link Inbox} on pg-boss: `send` commits the job before it resolves, so an acknowledged event is
 * in PostgreSQL. Exhausted jobs are copied to the `<name>.dead` queue, which nothing works: the dead
 * letters. The exhausted job stays in the queue, cancelled, so its id refuses a redelivery; a replay
 * is pg-boss's `redrive()`, one statement that moves the dead letter back as a new job.
 */
export function pgBossInbox(options: PgBossInboxOptions): Inbox {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      'takes options: pgBossInbox({ connectionString }) or pgBossInbox({ boss })',
    );
  checkOptionKeys(options, KEYS, WHERE);
  if ((options.boss === undefined) === (options.connectionString === undefined))
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      'give exactly one of boss (a started PgBoss) or connectionString',
    );
  const name = options.name ?? 'service-webhooks';
  if (typeof name !== 'string' || !NAME.test(name))
    throw new OptionsError('ERR_SW_NAME', WHERE, 'name must be 1–50 letters, digits, "_", "-" or "."');
  const expireInSeconds = options.expireInSeconds ?? 900;
  if (!Number.isSafeInteger(expireInSeconds) || expireInSeconds < 1)
    throw new OptionsError('ERR_SW_TIMEOUT', WHERE, 'expireInSeconds must be a whole number ≥ 1');
  const owned = options.boss === undefined;
  if (!owned && typeof options.boss?.send !== 'function')
    throw new OptionsError('ERR_SW_OPTION', WHERE, "boss must be a PgBoss from 'pg-boss'");
  const schema = checkSchemaName(options.schema ?? 'pgboss', WHERE);
  const maxDepth = checkMaxDepth(options.maxDepth, WHERE);
  const warn = rateLimitedLog(resolveLogger(options.logger, WHERE));
  const dead = `${name}.dead`;
  const workers = new Set<PgBossWorker>();
  /** The routers of the workers started here: a replay's handler names are checked against them. */
  const routers = new Set<EventRouter>();
  let ready: Promise<PgBoss> | undefined;
  /** The boss once `ready` settled with it. */
  let started: PgBoss | undefined;

  /** Starts an owned boss and makes both queues, once; a failure is forgotten so the next call tries again. */
  function boss(): Promise<PgBoss> {
    ready ??= (async () => {
      const b =
        options.boss ?? new (loadPgBoss().PgBoss)({ connectionString: options.connectionString, schema });
      if (owned) {
        b.on('error', (error: unknown) =>
          warn(
            'error',
            'pg-boss-error',
            { err: error },
            'pg-boss reported an error; it keeps trying (check the database)',
          ),
        );
        await b.start();
      }
      // A replayed dead letter is re-created by pg-boss from the queue's settings, not the send's.
      const settings = { retryLimit: RETRY_LIMIT, retryDelay: 1, deleteAfterSeconds: TOMBSTONE_SECONDS };
      await ensureQueue(b, name, settings, { expireInSeconds });
      await ensureQueue(b, dead, { retentionSeconds: DEAD_LETTER_RETENTION_SECONDS });
      await checkReadSchema(b, schema, WHERE);
      // Each enqueue after this one skips the wait for a promise long settled.
      started = b;
      return b;
    })().catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  }

  const roomFor =
    maxDepth === undefined
      ? undefined
      : depthGate(maxDepth, async () => {
          const status = await readStatus(await boss(), schema, name, dead);
          return status.waiting + status.delayed;
        });

  /** Every job's options but its id, built once. */
  const sendOptions = {
    // The worker decides when a job is exhausted and when it runs again.
    retryLimit: RETRY_LIMIT,
    retryDelay: 1,
    expireInSeconds,
    // A dead-lettered job is kept, cancelled, as long as its dead letter: its id refuses a redelivery.
    deleteAfterSeconds: TOMBSTONE_SECONDS,
  };

  async function enqueue(delivery: QueuedDelivery): Promise<void> {
    const b = started ?? (await boss());
    if (roomFor !== undefined) await roomFor();
    // The id is the key's: a redelivery's send conflicts and adds nothing (it resolves null).
    await b.send(name, delivery, { ...sendOptions, id: jobIdFor(delivery.key) });
  }

  /**
   * Makes the quarantined delivery a dead letter at once, in one transaction, in the shape the
   * worker leaves one: its job, sent and cancelled (its id refuses a later enqueue or quarantine of
   * the key, as a dead-lettered job's does), and its letter in `<name>.dead` (attempts 0, the
   * problem as its last error, its issues). A key the queue holds already adds nothing.
   */
  async function quarantine(delivery: QueuedDelivery): Promise<void> {
    const b = started ?? (await boss());
    checkTransactions(b, 'inbox.quarantine');
    const id = jobIdFor(delivery.key);
    const data: DeadLetterData = {
      delivery,
      attempts: 0,
      lastError: unreadableError(delivery),
      failedAt: new Date().toISOString(),
    };
    data.issues = issueRefsOf(data);
    await inTransaction(b, async (db) => {
      if ((await b.send(name, delivery, { ...sendOptions, id, db })) === null) return false;
      await b.cancel(name, id, { db });
      await b.send(dead, data, { id, retentionSeconds: DEAD_LETTER_RETENTION_SECONDS, db });
      return true;
    });
  }

  /**
   * Replays the dead letters of event `id` to run only the handlers `names`: every one is checked
   * first (nothing moves if a name is unknown); then each, in one transaction, is updated to say so
   * (its named handlers not yet done, `runOnly`) and moved back by pg-boss's redrive.
   */
  async function replayHandlers(b: PgBoss, id: string, names: readonly string[]): Promise<number> {
    checkTransactions(b, 'inbox.replay');
    const jobs = await findDeadJobs(b, schema, dead, { eventId: id, limit: MAX_DEAD_LETTERS });
    for (const job of jobs) checkReplayHandlers(deadLetterFromData(job.data), names, routers);
    let replayed = 0;
    for (const job of jobs) {
      await inTransaction(b, async (db) => {
        const data = { ...job.data, handlers: replayStates(job.data.handlers, names), runOnly: names };
        if ((await b.update(dead, data, { id: job.id, db })).updated !== 1) return false;
        const moved = await b.redrive(dead, { destination: name, ids: [job.id], limit: 1, db });
        replayed += moved;
        return moved === 1;
      });
    }
    return replayed;
  }

  return {
    engine: 'pg-boss',
    name,
    enqueue,
    quarantine,
    async startWorker(router: EventRouter, workerOptions?: InboxWorkerOptions) {
      const alerts = checkIssueAlerts(workerOptions, 'inbox.startWorker');
      const b = await boss();
      const started = startPgBossWorker(b, { name, dead }, router, workerOptions);
      const watch =
        alerts &&
        watchIssues({
          ...alerts,
          read: () => findIssues(b, schema, dead, { limit: MAX_ISSUES }),
          ledger: pgIssueLedger(b, name),
          log: resolveLogger(workerOptions?.logger, 'inbox.startWorker'),
        });
      const worker: PgBossWorker = {
        pausedNow: (paused) => started.pausedNow(paused),
        close: () => Promise.all([watch?.close(), started.close()]).then(() => undefined),
      };
      workers.add(worker);
      routers.add(router);
      return { close: () => worker.close().finally(() => workers.delete(worker)) };
    },
    async deadLetters(options): Promise<DeadLetter[]> {
      return readDeadLetters(await boss(), schema, dead, checkDeadLettersQuery(options));
    },
    async issues(query) {
      return findIssues(await boss(), schema, dead, checkIssuesQuery(query));
    },
    async replay(given: string | ReplayFilter, options?: ReplayOptions) {
      const target = checkReplayTarget(given);
      const { pages, handlers } = checkReplayOptions(target, options);
      const b = await boss();
      if (handlers !== undefined && typeof target === 'string') return replayHandlers(b, target, handlers);
      const issue = typeof target === 'string' ? undefined : target.issue;
      const query =
        typeof target === 'string' ? { eventId: target } : { type: target.type, since: target.since, issue };
      // A page at a time, each after the last one read (in id order, an index range each): the walk
      // ends, even if a page cannot move.
      let after: DeadJob | undefined;
      const madeBy = await databaseNow(b);
      return replayPages(async () => {
        const jobs = await findDeadJobs(b, schema, dead, {
          ...query,
          limit: REPLAY_BATCH,
          after,
          byId: true,
          madeBy,
        });
        after = jobs.at(-1);
        const done = after === undefined || jobs.length < REPLAY_BATCH;
        // A letter written before issues were kept is read for its issue here.
        const ids = jobs.filter((j) => issue === undefined || inIssue(j.data, issue)).map((j) => j.id);
        if (ids.length === 0 || pages.dryRun === true) return { matched: ids.length, replayed: 0, done };
        // One statement of pg-boss's moves the page: each dead letter is deleted as its job is
        // created, so at no instant is the event neither queued nor dead (a replayed job that dies
        // again has a new id, and its new dead letter conflicts with nothing).
        const replayed = await b.redrive(dead, { destination: name, ids, limit: ids.length });
        return { matched: ids.length, replayed, done };
      }, pages);
    },
    async status() {
      const b = await boss();
      return { paused: await isPaused(b, name), ...(await readStatus(b, schema, name, dead)) };
    },
    async pause() {
      await setPaused(await boss(), name, true);
      // This process's workers hear of it at once; others' at their next read of the flag.
      for (const w of workers) w.pausedNow(true);
    },
    async resume() {
      await setPaused(await boss(), name, false);
      for (const w of workers) w.pausedNow(false);
    },
    async close() {
      await Promise.allSettled([...workers].map((w) => w.close()));
      if (owned && ready !== undefined)
        await (await ready.catch(() => undefined))?.stop({ graceful: false, timeout: 5000 });
    },
  };
}

/**
 * Makes `queue` with `settings` (and `initial`), or brings an existing one's `settings` to them: a
 * queue made by an older version (pg-boss's default retryLimit 2) would fail a replayed job for good
 * behind the worker's back. `initial` is set only on a new queue (another process's
 * `expireInSeconds` is its own). Another process making the queue meanwhile is no failure.
 */
async function ensureQueue(
  boss: PgBoss,
  queue: string,
  settings: PgBossModule.QueueOptions,
  initial: PgBossModule.QueueOptions = {},
): Promise<void> {
  const found = await boss.getQueue(queue);
  if (found === null) {
    await boss.createQueue(queue, { ...initial, ...settings }).catch(async (error: unknown) => {
      if ((await boss.getQueue(queue)) === null) throw error;
    });
    return;
  }
  const differs = (Object.keys(settings) as (keyof typeof settings)[]).some(
    (key) => found[key] !== settings[key],
  );
  if (differs) await boss.updateQueue(queue, settings);
}
