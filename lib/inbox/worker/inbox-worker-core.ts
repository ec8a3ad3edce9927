import { checkOptionKeys } from '../../check-option-keys';
import type { BookkeepingEvent } from '../../idempotency/bookkeeping-event';
import type { EventRouter } from '../../events/event-router';
import type { RetryLater } from '../../events/retry-later';
import { RateLimited } from '../../events/rate-limited';
import type { InboxBackoff, InboxWorkerOptions, JobRecord } from '../inbox';
import type { HandlerStates, JobHandlers, QueuedDelivery } from '../queued-delivery';
import { checkWorkerRate, type WorkerRate } from '../worker-rate';
import { resolveLogger, type ResolvedLogger } from '../../logger';
import { OptionsError } from '../../options-error';
import { boundedStore } from '../../core/dispatch/bounded-store';
import { callContained } from '../../call-contained';
import { resolveDispatchOptions } from '../../core/dispatch/dispatch-options';
import { idempotencySettings } from '../../core/dispatch/idempotency-settings';
import { rateLimitedLog } from '../../rate-limited-log';
import { checkRouter } from '../../core/resolve-receiver-options';
import type { TracingHooks } from '../../core/tracing';
import { checkOrderingStore } from '../../core/dispatch/check-ordering-store';
import { hasEntityOrdering } from '../../idempotency/entity-ordering-store';
import { checkEntityRetentionPlace, entityRetention, triesSpanMs } from './entity-retention';
import { orderingGuard } from '../../core/dispatch/ordering-guard';
import { errorMessage } from './error-message';
import { runQueuedEvent, type QueuedRunResult, type HandlerOutcomes } from './run-queued-event';

const WORKER_OPTION_KEYS = [
  'concurrency',
  'attempts',
  'backoff',
  'idempotency',
  'timeoutMs',
  'entityRetentionMs',
  'maxFutureSkewMs',
  'logger',
  'onJob',
  'rate',
  // Read by the engine's inbox (issue-watch.ts), not here.
  'onIssue',
  'issueCheckMs',
];

/**
 * What the engine does with a job after a try: the same decision on every engine. `putBack`: nothing
 * failed (another try holds the event or its entity), so the job runs again after `delayMs` without
 * this try counting as one of its attempts. `rateLimited`: a handler threw RateLimited, so the whole
 * queue waits `delayMs` and the job is put back, its attempt not counted either.
 */
export type JobDisposition = (
  | { then: 'complete'; status: 'processed' | 'unhandled' | 'duplicate' | 'stale' }
  | { then: 'retry' | 'putBack' | 'rateLimited'; delayMs: number; error: string }
  | { then: 'dead'; error: string }
) & {
  /**
   * Each handler's state after this try, when it ran any: the engine keeps it in the job's data for
   * the next try (and on its dead letter), through its own API.
   */
  handlers?: HandlerStates;
};

/** What every engine's worker shares: the checked options, the retry decision and the one runner. */
export interface InboxWorkerCore {
  concurrency: number;
  attempts: number;
  /** How many tries may start per window, if bounded. */
  rate: WorkerRate | undefined;
  log: ResolvedLogger;
  /** The delay in ms before the try after `attempt` (1-based) failed; RetryLater's own wins. */
  delayAfter(attempt: number, retryLater: RetryLater | undefined): number;
  /**
   * One try of a queued event through the router, and what to do with its job. `job`: what the job's
   * data says of its handlers (their states, a replay's `runOnly`). Never rejects.
   */
  run(delivery: QueuedDelivery, attempt: number, job?: JobHandlers): Promise<JobDisposition>;
}

function whole(value: unknown, name: string, where: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      `${name} must be a whole number ≥ ${min} (got ${String(value)})`,
    );
  }
  return value;
}

function schedule(backoff: InboxBackoff | undefined, where: string): (attempt: number) => number {
  if (typeof backoff === 'function') return (attempt) => Math.max(0, Number(backoff(attempt)) || 0);
  if (backoff !== undefined && (typeof backoff !== 'object' || backoff === null))
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      'backoff must be { delayMs?, maxDelayMs? } or (attempt) => ms',
    );
  checkOptionKeys(backoff ?? {}, ['delayMs', 'maxDelayMs'], `${where} backoff`);
  const first = whole(backoff?.delayMs, 'backoff.delayMs', where, 30_000, 0);
  const max = whole(backoff?.maxDelayMs, 'backoff.maxDelayMs', where, 3_600_000, 0);
  return (attempt) => Math.min(max, first * 2 ** Math.min(attempt - 1, 40));
}

/** The handlers a try ran, each with its outcome and its own try number, for its {@link JobRecord}. */
function ranThisTry(states: HandlerStates, outcomes: HandlerOutcomes): JobRecord['handlers'] {
  const ran: NonNullable<JobRecord['handlers']> = {};
  for (const name of [...outcomes.ran.keys(), ...outcomes.unsettled]) {
    const state = states[name];
    if (state !== undefined)
      ran[name] = {
        ok: state.ok,
        attempt: state.attempts,
        ...(state.lastError === undefined ? {} : { error: state.lastError }),
      };
  }
  return ran;
}

/** The handlers' states after a try: those it ran counted, those known done marked so. */
function nextStates(states: HandlerStates | undefined, outcomes: HandlerOutcomes): HandlerStates {
  const next: HandlerStates = { ...states };
  for (const name of outcomes.before)
    if (next[name]?.ok !== true) next[name] = { ok: true, attempts: next[name]?.attempts ?? 0 };
  const count = (name: string) => (states?.[name]?.attempts ?? 0) + 1;
  for (const [name, run] of outcomes.ran)
    next[name] = run.ok
      ? { ok: true, attempts: count(name) }
      : { ok: false, attempts: count(name), lastError: errorMessage(run.error) };
  for (const name of outcomes.unsettled)
    next[name] = {
      ok: false,
      attempts: count(name),
      lastError: 'it was still running when the try timed out',
    };
  return next;
}

/** Checks `startWorker` options once, before the worker takes a job. */
export function inboxWorkerCore(
  router: EventRouter,
  options: InboxWorkerOptions = {},
  where: string,
  tracing: TracingHooks,
): InboxWorkerCore {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('ERR_SW_OPTION', where, 'options must be an object');
  checkOptionKeys(options, WORKER_OPTION_KEYS, where);
  checkRouter(router, where);
  const log = resolveLogger(options.logger, where);
  const backoff = schedule(options.backoff, where);
  if (options.onJob !== undefined && typeof options.onJob !== 'function')
    throw new OptionsError('ERR_SW_OPTION', where, 'onJob must be a function (record) => void');
  const onJob = options.onJob;
  if (onJob?.onBookkeeping !== undefined && typeof onJob.onBookkeeping !== 'function')
    throw new OptionsError('ERR_SW_OPTION', where, 'onJob.onBookkeeping must be a function, or absent');
  const bookkeeping = onJob?.onBookkeeping?.bind(onJob);
  // As the receiver's onDelivery.onBookkeeping: what the store's bookkeeping did, told as it happens.
  const onBookkeeping =
    bookkeeping &&
    ((event: BookkeepingEvent) =>
      callContained(
        () => bookkeeping(event),
        (error) => log.error({ err: error }, 'onJob.onBookkeeping threw; the job was not affected'),
      ));
  const timeoutMs = options.timeoutMs ?? 600_000;
  checkEntityRetentionPlace(options.idempotency, where);
  // The receiver's store checks and bounds, reused: the worker's ledger is the same kind of store,
  // given the same way (a bare store, or the receiver's { store, scope, … }). Its scope keys the
  // entities as the receiver's does. A killed worker's claim frees up after twice the bound of a
  // try, not the receiver's minute.
  const { store: given, ...settings } = idempotencySettings(options.idempotency, where);
  const dispatch = resolveDispatchOptions(
    {
      idempotency: {
        ...settings,
        ...(given === undefined ? {} : { store: given }),
        leaseMs: settings.leaseMs ?? 2 * timeoutMs,
      },
      timeoutMs,
      logger: options.logger,
      maxFutureSkewMs: options.maxFutureSkewMs,
    },
    where,
  );
  const warn = rateLimitedLog(log);
  const store = dispatch.store === false ? undefined : boundedStore(dispatch, log, warn, onBookkeeping);
  // Refusing such a store would stop every custom store's worker for what only an overrunning
  // handler risks: it is said once, with the way out.
  if (store !== undefined && store.renew === undefined)
    log.warn(
      { leaseMs: dispatch.leaseMs },
      `${where}: the idempotency store has no renewLease, so a try cannot keep its claim while its handlers run: a handler that ignores ctx.signal and runs past leaseMs (${dispatch.leaseMs} ms) may be started again by another try while it runs. Give the store renewLease(key, token, leaseMs) (RedisStore, PostgresStore and MemoryStore have it)`,
    );
  // Ordered handlers are guarded when the job runs: the worker's store must have entity operations.
  checkOrderingStore(router, dispatch.store);
  if (
    router.hasOrderedHandlers &&
    hasEntityOrdering(dispatch.store) &&
    typeof dispatch.store.renewEntity !== 'function'
  )
    log.warn(
      { leaseMs: dispatch.leaseMs },
      `${where}: the idempotency store has no renewEntity, so a try cannot keep its entity while its ordered handlers run: a newer event of the entity may run its ordered handlers alongside one that ignores ctx.signal past leaseMs (${dispatch.leaseMs} ms). Give the store renewEntity(key, token, leaseMs) (RedisStore, PostgresStore and MemoryStore have it)`,
    );
  const attempts = whole(options.attempts, 'attempts', where, 13);
  // Entity marks outlive the receiver's retry window here: the inbox can run an event much later
  // (retries, a dead letter replayed weeks on), and the mark must still say it is older.
  const entityRetentionMs = entityRetention(
    options.entityRetentionMs,
    triesSpanMs(attempts, timeoutMs, backoff, where),
    where,
  );
  const guard = orderingGuard({ ...dispatch, retentionMs: entityRetentionMs }, log, warn, onBookkeeping);
  const delayAfter = (attempt: number, retryLater: RetryLater | undefined) =>
    retryLater?.retryAfterSeconds === undefined ? backoff(attempt) : retryLater.retryAfterSeconds * 1000;
  // No answer goes to the Service from a worker: the queue decides what happens next.
  const afterFailure = (attempt: number, retryLater: RetryLater | undefined) =>
    retryLater instanceof RateLimited
      ? `the downstream is throttling: the queue starts no try for ${delayAfter(attempt, retryLater) / 1000} s, then tries the event again (this attempt not counted)`
      : attempt >= attempts
        ? `attempt ${attempt} of ${attempts} was the last: the event goes to the dead letters`
        : `the queue tries the event again in ${delayAfter(attempt, retryLater) / 1000} s (attempt ${attempt + 1} of ${attempts})`;
  const context = {
    router,
    store,
    log,
    timeoutMs,
    leaseMs: dispatch.leaseMs,
    guard,
    tracing,
    afterFailure,
    attempts,
    overran: new Set<string>(),
  };

  function dispose(result: QueuedRunResult, attempt: number, delivery: QueuedDelivery): JobDisposition {
    // A throttling downstream is no fault of the event's: its attempts are kept for real failures.
    if (!result.ok && result.retryLater instanceof RateLimited)
      return {
        then: 'rateLimited',
        delayMs: delayAfter(attempt, result.retryLater),
        error: errorMessage(result.error),
      };
    // Busy is not a failure: spending an attempt on it would dead-letter an event no handler failed.
    if (!result.ok && result.putBack === true)
      return {
        then: 'putBack',
        delayMs: delayAfter(attempt, result.retryLater),
        error: errorMessage(result.error),
      };
    // Settled for good: a later overrun of its last try (a replay) is put back once again.
    context.overran.delete(delivery.key);
    if (result.ok) return { then: 'complete', status: result.status };
    const error = errorMessage(result.error);
    if (result.permanent || attempt >= attempts) {
      log.error(
        { eventId: delivery.id, type: delivery.type, attempt, error },
        'a queued event failed for good; it is kept in the dead letters until replayed',
      );
      return { then: 'dead', error };
    }
    return { then: 'retry', delayMs: delayAfter(attempt, result.retryLater), error };
  }

  function report(record: JobRecord): void {
    callContained(
      () => onJob?.(record),
      (error) => log.error({ err: error }, 'onJob threw; the job was not affected'),
    );
  }

  return {
    concurrency: whole(options.concurrency, 'concurrency', where, 1),
    attempts,
    rate: checkWorkerRate(options.rate, where),
    log,
    delayAfter,
    async run(delivery, attempt, job = {}) {
      const started = Date.now();
      const result = await runQueuedEvent(context, delivery, attempt, job);
      const outcomes = result.handlers;
      // Written to the job only when the try changed them (a busy put-back ran nothing new).
      const changed =
        outcomes !== undefined &&
        (outcomes.ran.size > 0 ||
          outcomes.unsettled.length > 0 ||
          outcomes.before.some((name) => job.handlers?.[name]?.ok !== true));
      const states = changed ? nextStates(job.handlers, outcomes) : undefined;
      const decided = dispose(result, attempt, delivery);
      // A completed job has no next try: its states are not kept.
      const disposition: JobDisposition =
        states === undefined || decided.then === 'complete' ? decided : { ...decided, handlers: states };
      if (onJob !== undefined)
        report({
          eventId: delivery.id,
          type: delivery.type,
          attempt,
          outcome:
            disposition.then === 'complete'
              ? disposition.status
              : disposition.then === 'putBack' || disposition.then === 'rateLimited'
                ? 'retry'
                : disposition.then,
          durationMs: Date.now() - started,
          queuedMs: Math.max(0, started - Date.parse(delivery.receivedAt)),
          ...(result.futureTime === true ? { futureTime: true } : {}),
          ...(states === undefined || outcomes === undefined
            ? {}
            : { handlers: ranThisTry(states, outcomes) }),
        });
      return disposition;
    },
  };
}
