import type { EventRouter } from '../events/event-router';
import type { BookkeepingEvent } from '../idempotency/bookkeeping-event';
import type { IdempotencyOptions } from '../idempotency/idempotency-options';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import type { Logger } from '../logger';
import type { InboxIssue, IssueAlert, IssuesQuery } from './inbox-issue';
import type { HandlerState, QueuedDelivery } from './queued-delivery';
import type { ReplayOptions } from './replay-pages';
import type { WorkerRate } from './worker-rate';

/** How long to wait before attempt `attempt + 1`, after attempt `attempt` (1-based) failed. */
export type InboxBackoff =
  | {
      /** The delay after the first failure; each next one doubles. Defaults to `30_000` ms. */
      delayMs?: number;
      /** No delay is longer than this. Defaults to `3_600_000` ms (1 hour). */
      maxDelayMs?: number;
    }
  | ((attempt: number) => number);

/** The options of {@link Inbox.startWorker}. */
export interface InboxWorkerOptions {
  /** How many jobs this worker runs at once. Defaults to `1`. */
  concurrency?: number;
  /**
   * At most `max` tries start per `perMs` ms, so a resumed or backed-up queue drains at a pace the
   * handlers' downstream can take. On BullMQ it bounds all the queue's workers together (BullMQ's
   * limiter, kept in Redis: give every worker the same); on pg-boss, which has no limiter, each
   * worker on its own (n workers start up to n × `max`). Defaults to none: as fast as `concurrency`
   * allows.
   */
  rate?: WorkerRate;
  /**
   * How many times a job is tried before it goes to the dead letters. Defaults to `13`: with the
   * default backoff, the tries spread over about 6 hours, as the Service's own retries do.
   */
  attempts?: number;
  /** The delay between tries; a handler's `RetryLater` chooses its own. Defaults to 30 s doubling up to 1 h. */
  backoff?: InboxBackoff;
  /**
   * Remembers which events' handlers succeeded, so a job run again (a worker killed after the
   * handlers but before the queue heard of it) does not run them twice. Share one store between
   * workers (`RedisStore`, `PostgresStore`). Given as the receiver's option is:
   * `{ store, scope, leaseMs, retentionMs, timeoutMs }` ({@link IdempotencyOptions}) or a bare store;
   * pass the receiver's own object so the worker shares its `scope` (entities of ordered handlers are
   * keyed by it). `leaseMs` must exceed this worker's `timeoutMs`. Defaults to a new `MemoryStore`
   * (this process only), scope `''`, `leaseMs` `2 × timeoutMs`; `false`: every try runs the handlers.
   */
  idempotency?: IdempotencyOptions | IdempotencyStore | false;
  /**
   * How long a job's handlers may run before they are asked to stop (`ctx.signal`) and the try fails
   * (the last try is put back once instead, while its handlers still run). A try keeps its event (and
   * an ordered handler's entity) while its handlers run, renewing the leases up to `timeoutMs +
   * idempotency.leaseMs` after it started. Defaults to `600_000` ms.
   */
  timeoutMs?: number;
  /**
   * How long the worker keeps an entity's newest mark (handlers with `{ ordering: 'newest-wins' }`)
   * after the entity's last success: an older event of it that runs within that time (a retry, a
   * dead letter replayed) is `stale`, however late. It must cover whatever the inbox can still run,
   * so it is apart from `idempotency.retentionMs` (the receiver's retry window, for done events).
   * Must be at least what ordinary retries can reach: the Service's retry window and a margin (7 h:
   * an older event can reach the queue that long after a newer one succeeded) plus the span of a
   * job's tries (`attempts × timeoutMs` plus the backoff's delays), or the worker throws at start.
   * Defaults to that plus 90 days, pg-boss's dead-letter retention: about 90 days and 15 hours with
   * the other defaults.
   */
  entityRetentionMs?: number;
  /**
   * How far an event's `time` may lie past the moment the receiver queued it and still place it in
   * its entity's history (handlers with `{ ordering: 'newest-wins' }`). Measured from the queued
   * delivery's `receivedAt`, not from when the job runs, so a retry or a replay weeks later is bounded
   * as it was on arrival. A later `time` still runs the handlers but counts as `receivedAt` + this, so
   * one event dated 9999 cannot make the entity's real events `stale`; it is logged, and the try's
   * {@link JobRecord} says `futureTime: true`. Defaults to `300_000` ms (5 minutes), as the receiver's.
   */
  maxFutureSkewMs?: number;
  /** Where failures are logged. Defaults to the console. */
  logger?: Logger | false;
  /**
   * Called after every try with what became of it (`inboxMetrics().onJob` counts them). It cannot
   * delay or change the job; what it throws is logged. Defaults to none.
   */
  onJob?: JobListener;
  /**
   * Called when an issue ({@link Inbox.issues}) opens (its first dead letter), grows past 10, 100,
   * 1000 (each power of ten), and resolves (its last dead letter replayed and processed, or
   * removed): once per change across every worker of the queue, whichever process sees it, and at
   * most once (a process that dies between noticing and calling says nothing). The queue's issues
   * are read at most once per `issueCheckMs` by one worker of them all. It cannot hold or fail the
   * worker: what it throws is logged, and it is not awaited. Defaults to none.
   */
  onIssue?: (alert: IssueAlert) => unknown;
  /**
   * How often, in ms, the workers (one of them each time) read the issues for `onIssue`: an alert
   * comes within about this long. On pg-boss each read groups the dead letters; on BullMQ it reads a
   * tally of them and reconciles a bounded step of it (see docs/performance.md).
   * Defaults to `15_000`; at least `100`.
   */
  issueCheckMs?: number;
}

/**
 * A worker's `onJob`: told of every try, and, through `onBookkeeping` when it has one, of what the
 * idempotency store's bookkeeping did (as a receiver's `onDelivery.onBookkeeping` is).
 */
export type JobListener = ((record: JobRecord) => unknown) & {
  /**
   * Called for what the worker's idempotency store did besides the try's own answer: a failed
   * markDone that a background retry recovered (`mark-done-recovered`) or gave up on
   * (`mark-done-failed`); each success whose record the store refused because its lease had run out
   * or been taken over (`lease-lost`); an event of an ordered entity dated past its receipt plus
   * `maxFutureSkewMs` (`future-time`, each time a try reaches the ordering guard, a try put back
   * while its entity is busy included: {@link JobRecord.futureTime} is the once-per-try signal). It
   * may come after `close()`, from a markDone retry still running. What it throws is logged. Read
   * once, when the worker starts. A listener composed of others keeps theirs only by passing it on:
   * `Object.assign((record) => { a.onJob(record); b.onJob(record) }, { onBookkeeping: b.onJob.onBookkeeping })`.
   */
  onBookkeeping?: (event: BookkeepingEvent) => unknown;
};

/** One try of a queued event, as {@link InboxWorkerOptions.onJob} is told of it. */
export interface JobRecord {
  /** The CloudEvent `id` of the queued event. */
  eventId: string;
  /** Its event type, as sent. */
  type: string;
  /** 1 for the first try. */
  attempt: number;
  /**
   * `retry`: it failed and runs again; `dead`: it failed for good and went to the dead letters;
   * `stale`: older than its entity's newest processed event, so its ordered handlers were skipped.
   */
  outcome: 'processed' | 'unhandled' | 'duplicate' | 'stale' | 'retry' | 'dead';
  /** How long the try ran. */
  durationMs: number;
  /** How long the event waited, from the receiver queueing it to this try starting. */
  queuedMs: number;
  /**
   * Set when the event's `time` lay past its receipt plus `maxFutureSkewMs`: its ordered handlers ran
   * (or it was `stale`) with the entity's mark held at that bound.
   */
  futureTime?: true;
  /**
   * The handlers this try ran, by name: whether each succeeded, its own try number (`ctx.attempt`),
   * and its error's message when it failed (or was still running when the try timed out). Absent
   * when the try ran none (a duplicate, a put-back); handlers skipped for a success recorded before
   * are not listed.
   */
  handlers?: Record<string, JobHandlerRun>;
}

/** One handler's run in a try, as {@link JobRecord.handlers} reports it. */
export interface JobHandlerRun {
  /** Whether it succeeded. */
  ok: boolean;
  /** Its own try number for the event (`ctx.attempt`), 1 for its first. */
  attempt: number;
  /** Its error's message, when it failed or was still running when the try timed out. */
  error?: string;
}

/** A running worker. */
export interface InboxWorker {
  /** Stops taking jobs, waits for the running ones, and closes what the worker opened. */
  close(): Promise<void>;
}

/** An event whose tries were exhausted: kept, never dropped, until replayed. */
export interface DeadLetter {
  /** The queued delivery: the event's envelope as received, its key, its trace context. */
  delivery: QueuedDelivery;
  /** How many tries ran. */
  attempts: number;
  /** The last try's error message. */
  lastError: string | null;
  /** When the receiver queued the event. */
  receivedAt: Date;
  /** When the last try failed. */
  failedAt: Date | null;
  /**
   * Each handler's state by name: `ok` once its success was recorded (a plain replay does not run it
   * again), `attempts` the tries of the job that ran it, `lastError` its last failure's message.
   * Absent on a dead letter whose job ran no handler (its envelope unreadable) or was written by an
   * older version.
   */
  handlers?: Record<string, HandlerState>;
  /**
   * Where it stands in the newest-first order: pass it as `deadLetters({ after })` to read the page
   * after it, or `{ before }` the page before. Opaque; meaningful to the inbox that gave it.
   */
  cursor?: string;
  /**
   * `invalid`: its last try could not read the event's data (an event the receiver quarantined with
   * `quarantine: true`, or one the code deployed then does not read); `failed`: its handlers failed.
   */
  reason?: 'failed' | 'invalid';
  /**
   * For an `invalid` dead letter: the first field the code deployed now cannot read, and what it
   * expected (`{ field: 'data.current_balance', expected: 'must be a number of dollars' }`). Absent
   * once this code reads the event: a replay then runs it.
   */
  problem?: {
    /** The field, as a path into the event: `data.current_balance`. */
    field: string;
    /** What the code expected of it: `must be a number of dollars`. */
    expected: string;
  };
}

/** Which dead letters {@link Inbox.deadLetters} reads. */
export interface DeadLettersOptions {
  /** At most this many: a whole number from 1 to 100 000. Defaults to `100`. */
  limit?: number;
  /** Only events of this type. Defaults to every type. */
  type?: string;
  /** Only those on which this handler (by name) has not succeeded. Defaults to none. */
  handler?: string;
  /**
   * Only those after this dead letter, newest first: the `cursor` of the last one of a page reads the
   * next page, so paging reaches each dead letter once, however many there are, holding a page at a
   * time. Defaults to none: from the newest.
   */
  after?: string;
  /**
   * Only those before this dead letter (newer than it), still given newest first: the `cursor` of the
   * first one of a page reads the page before it (the `limit` nearest). Not with `after`. Defaults to
   * none.
   */
  before?: string;
}

/** Which dead letters {@link Inbox.replay} puts back. */
export interface ReplayFilter {
  /** Only events of this type. */
  type?: string;
  /** Only events that failed at or after this time. */
  since?: Date;
  /** Only the dead letters of this issue (its `key`, from {@link Inbox.issues}). */
  issue?: string;
}

/** What a queue holds now. */
export interface InboxStatus {
  /**
   * The queue is paused ({@link Inbox.pause}): receivers still queue events, and no worker starts a
   * try until it is resumed.
   */
  paused: boolean;
  /** Jobs a worker may take now. */
  waiting: number;
  /** Jobs waiting out a delay before their next try (a backoff, a `RetryLater`, a busy put-back). */
  delayed: number;
  /** Jobs a worker runs now. */
  active: number;
  /** Dead letters. */
  dead: number;
  /** Age in ms (since it was queued) of the oldest job in `waiting`, or null when there is none. */
  oldestAgeMs: number | null;
  /**
   * Age in ms (since it was queued) of the oldest job in `delayed` on pg-boss; on BullMQ, of the
   * delayed job due first (its delayed set is ordered by when it runs). Null when there is none.
   */
  oldestDelayedAgeMs: number | null;
}

/**
 * A durable queue for deliveries: the receiver enqueues and acknowledges, workers run the handlers.
 * Made by `bullmqInbox()` (`service-webhooks/bullmq`) or `pgBossInbox()` (`service-webhooks/pg-boss`).
 */
export interface Inbox {
  /** Which engine holds the queue (`'bullmq'`, `'pg-boss'`). */
  readonly engine: string;
  /** The queue's name. */
  readonly name: string;
  /**
   * Holds the delivery durably. Idempotent by `delivery.key`: enqueuing the same key again adds
   * nothing. Rejects when the engine did not confirm.
   */
  enqueue(delivery: QueuedDelivery): Promise<void>;
  /**
   * Holds a delivery whose data this code cannot read (a receiver's `quarantine: true`) straight in
   * the dead letters, `reason: 'invalid'`, before it resolves: no worker needs to run, nor the queue
   * to be resumed, for it to show in {@link Inbox.deadLetters}, {@link Inbox.issues} and `status()`
   * (pg-boss: in `<name>.dead`; BullMQ: failed in the queue `<name>-quarantine`, read with the
   * queue's own failed set).
   * Idempotent by `delivery.key`, as `enqueue` is, and against it: a key already queued or dead adds
   * nothing. Rejects when the engine did not confirm. An inbox without it (one of your own) is given
   * the delivery through `enqueue`, and its worker's first try dead-letters it.
   */
  quarantine?(delivery: QueuedDelivery): Promise<void>;
  /** Runs the router's handlers for queued events, with retries and dead letters. */
  startWorker(router: EventRouter, options?: InboxWorkerOptions): Promise<InboxWorker>;
  /**
   * The dead letters, newest first: at most `limit`, a whole number from 1 to 100 000 (defaults to
   * `100`), of `type` when given, and with `handler` only those on which that handler (by name) has
   * not succeeded. Rejects, the same on every engine, when given anything else.
   */
  deadLetters(options?: DeadLettersOptions): Promise<DeadLetter[]>;
  /**
   * The open issues: the dead letters grouped by event type, handler and error fingerprint, the most
   * recent first: at most `limit` (1 to 1000, defaults to `100`), those with a dead letter failed at
   * or after `since` when given. Computed by the engine, never holding every dead letter: pg-boss
   * groups the letters, BullMQ reads a tally kept as they come and go (see docs/performance.md).
   */
  issues(query?: IssuesQuery): Promise<InboxIssue[]>;
  /**
   * Puts dead letters back in the queue (one event by id, or by filter; `{}` for all); resolves how
   * many. Idempotent. Rejects an unknown filter key (with a "did you mean") or an invalid `since`.
   * The replayed job runs the handlers without a recorded success, or with `options.handlers` only
   * those ({@link ReplayOptions}). Works a page at a time, whatever the filter: `options.onProgress`
   * hears of each page, and an aborted `options.signal` stops it between pages, resolving how many
   * were put back so far.
   */
  replay(target: string | ReplayFilter, options?: ReplayOptions): Promise<number>;
  /** Queue depth, oldest job age, dead letters, and whether the queue is paused. */
  status(): Promise<InboxStatus>;
  /**
   * Pauses the whole queue: every worker of it, in every process, stops starting tries (tries already
   * running finish), while receivers go on queueing and acknowledging events. Held by the engine
   * (BullMQ's queue pause; on pg-boss a marker queue `<name>.paused` the workers read once a
   * second), so it outlasts restarts of workers, receivers and the engine, until {@link Inbox.resume}.
   * Idempotent.
   */
  pause(): Promise<void>;
  /** Lets the workers of a paused queue start tries again (at their `rate`, if given). Idempotent. */
  resume(): Promise<void>;
  /** Closes what the inbox opened (not a connection or queue it was given). */
  close(): Promise<void>;
}
