import type { ClaimResult, HandlersClaim, IdempotencyStore } from '../../idempotency/idempotency-store';
import type { BookkeepingEvent } from '../../idempotency/bookkeeping-event';
import type { ResolvedLogger } from '../../logger';
import type { ResolvedDispatchOptions } from './dispatch-options';
import type { RateLimitedLog } from '../../rate-limited-log';
import { retrySpaced } from './retry-spaced';
import type { Outcome } from './run-handlers';
import { boundedCall, storeUnavailable } from './store-call';
import { storeCallsNow } from '../../idempotency/answers-now';

/** The store as dispatch uses it: every call bounded, every failure turned into an answer or a log line. */
export interface BoundedStore {
  /** The claim's result, or `'unavailable'` when the store failed or did not answer in time. */
  claim(key: string, token: string, eventId: string): Promise<ClaimResult | 'unavailable'>;
  /**
   * As `claim`, also saying which handlers of the event succeeded before; `undefined` when the store
   * records no handler (no `claimHandlers` and `markHandlerDone`). Never rejects.
   */
  claimHandlers:
    ((key: string, token: string, eventId: string) => Promise<HandlersClaim | 'unavailable'>) | undefined;
  /**
   * Records a handler's success, bounded; never rejects. A failure or a lease lost is logged: the
   * handler then runs again on the event's next delivery, if another handler fails.
   */
  recordHandler: (key: string, token: string, handler: string, eventId: string) => Promise<void>;
  /**
   * Extends the lease `token` holds on `key` by the lease, bounded: `false` when the token no longer
   * holds it, `'unavailable'` when the store failed or did not answer in time. Never rejects.
   * `undefined` when the store cannot renew (no `renewLease`).
   */
  renew: ((key: string, token: string) => Promise<boolean | 'unavailable'>) | undefined;
  /**
   * Marks the key done after success, or releases it after failure; never rejects. A markDone that
   * fails goes on in the background, handed to `linger` so the event stays held in this process. A
   * failure of handlers that ran (an outcome with errors) is counted by the store, so the next
   * claim's `attempt` is one more; `counted: false` (an enqueue that failed) and an outcome with no
   * error (nothing ran) are not.
   */
  settle(
    key: string,
    token: string,
    outcome: Outcome,
    eventId: string,
    linger: (background: Promise<void>) => void,
    counted?: boolean,
  ): Promise<Outcome>;
  /**
   * The claim and the settle answered at once, when the store offers its calls so (the built-in
   * MemoryStore): a delivery then waits no promise turn for its store. Undefined for any other store.
   */
  now: BoundedStoreNow | undefined;
}

/** {@link BoundedStore}'s calls for a store that answers at once: the same results, no promises. */
export interface BoundedStoreNow {
  claim(key: string, token: string, eventId: string): ClaimResult | 'unavailable';
  claimHandlers(key: string, token: string, eventId: string): HandlersClaim | 'unavailable';
  settle(...args: Parameters<BoundedStore['settle']>): Outcome;
}

/**
 * Bounds every store call by `storeTimeoutMs`. A claim that lands after we stopped waiting is given
 * back, or it would hold the event for a whole lease; a store that says it answers at once (the
 * in-memory one) cannot hang, so it gets no timer on the hot path.
 */
export function boundedStore(
  options: ResolvedDispatchOptions,
  log: ResolvedLogger,
  warn: RateLimitedLog,
  onBookkeeping?: (event: BookkeepingEvent) => void,
): BoundedStore {
  const { leaseMs, retentionMs, storeTimeoutMs } = options;
  const retryWindowMs = leaseMs / 2;
  const store = options.store as IdempotencyStore;
  const inMemory = store.answersAtOnce === true;

  const bounded = boundedCall(store, storeTimeoutMs);

  /** A claim that lands after we stopped waiting is released, or it would hold the event a whole lease. */
  const giveBack = (key: string, token: string) => (late: ClaimResult) => {
    if (late !== 'claimed') return;
    Promise.resolve()
      .then(() => store.release(key, token))
      .catch(() => undefined);
  };

  const recording = typeof store.claimHandlers === 'function' && typeof store.markHandlerDone === 'function';
  const callsNow = storeCallsNow(store);

  /** A release that failed: logged; the outcome stands. */
  function notReleased(error: unknown, outcome: Outcome, eventId: string): Outcome {
    log.error(
      { eventId, err: error },
      'could not release the event; a redelivery waits for its lease to end',
    );
    return outcome;
  }

  /** A markDone that failed: logged, and retried in the background, held by `linger`. */
  function notMarked(
    error: unknown,
    outcome: Outcome,
    key: string,
    token: string,
    eventId: string,
    linger: (background: Promise<void>) => void,
  ): Outcome {
    log.warn(
      { eventId, err: error },
      `could not mark the event done; retrying in the background for up to ${Math.round(retryWindowMs / 1000)} s`,
    );
    linger(retryMarkDone(key, token, eventId));
    return outcome;
  }

  /** Whether the settle of `outcome` counts a failed run (handlers ran, and one failed). */
  const countsRun = (outcome: Outcome, counted: boolean) =>
    counted && !outcome.ok && outcome.errors.length > 0;

  const nowCalls: BoundedStoreNow | undefined =
    callsNow === undefined
      ? undefined
      : {
          claim(key, token, eventId) {
            try {
              return callsNow.claim(key, token, leaseMs);
            } catch (error) {
              return storeUnavailable(warn, eventId, error);
            }
          },
          claimHandlers(key, token, eventId) {
            try {
              return callsNow.claimHandlers(key, token, leaseMs);
            } catch (error) {
              return storeUnavailable(warn, eventId, error);
            }
          },
          settle(key, token, outcome, eventId, linger, counted = true) {
            try {
              if (!outcome.ok) {
                callsNow.release(key, token, countsRun(outcome, counted) ? retentionMs : undefined);
                return outcome;
              }
            } catch (error) {
              return notReleased(error, outcome, eventId);
            }
            try {
              noteMarkDone(callsNow.markDone(key, token, retentionMs), eventId);
            } catch (error) {
              return notMarked(error, outcome, key, token, eventId, linger);
            }
            return outcome;
          },
        };

  // Promise chains, not async functions: these run for every delivery, and an async frame costs more.
  // A store method that throws instead of rejecting is caught all the same.
  return {
    // As claim: a try instead of a Promise.resolve().then() in front, one promise and one turn fewer.
    claimHandlers: recording
      ? (key, token, eventId) => {
          const unavailable = (error: unknown) => storeUnavailable(warn, eventId, error);
          try {
            return bounded(
              'claimHandlers',
              store.claimHandlers!(key, token, leaseMs),
              inMemory ? undefined : (late) => giveBack(key, token)(late.result),
            ).then(undefined, unavailable);
          } catch (error) {
            return Promise.resolve(unavailable(error));
          }
        }
      : undefined,
    recordHandler: (key, token, handler, eventId) =>
      Promise.resolve()
        .then(() => bounded('markHandlerDone', store.markHandlerDone!(key, token, handler, retentionMs)))
        .then(
          (applied) => {
            if (applied) return;
            // Refused: the lease ran out (or was taken over) first. Counted each time, where the log
            // says it once a minute: an operator's metric must see every success that may run again.
            onBookkeeping?.('lease-lost');
            warn(
              'warn',
              'lease-lost',
              { eventId, handler, leaseMs },
              "a handler succeeded after the event's lease ran out; its success is not recorded, so it runs again if the event is delivered again. Raise leaseMs above your slowest handler",
            );
          },
          (error: unknown) =>
            log.warn(
              { eventId, handler, err: error },
              "could not record a handler's success; it runs again if the event is delivered again",
            ),
        ),
    claim(key, token, eventId) {
      const unavailable = (error: unknown) => storeUnavailable(warn, eventId, error);
      try {
        const pending = store.claim(key, token, leaseMs);
        return bounded('claim', pending, inMemory ? undefined : giveBack(key, token)).then(
          undefined,
          unavailable,
        );
      } catch (error) {
        return Promise.resolve(unavailable(error));
      }
    },
    renew:
      typeof store.renewLease === 'function'
        ? (key, token) =>
            Promise.resolve()
              .then(() => bounded('renewLease', store.renewLease!(key, token, leaseMs)))
              .then(
                (renewed) => renewed,
                () => 'unavailable' as const,
              )
        : undefined,
    settle(key, token, outcome, eventId, linger, counted = true) {
      if (!outcome.ok) {
        try {
          const released = countsRun(outcome, counted)
            ? store.release(key, token, retentionMs)
            : store.release(key, token);
          return bounded('release', released).then(
            () => outcome,
            (error: unknown) => notReleased(error, outcome, eventId),
          );
        } catch (error) {
          return Promise.resolve(notReleased(error, outcome, eventId));
        }
      }
      const failed = (error: unknown) => notMarked(error, outcome, key, token, eventId, linger);
      try {
        return bounded('markDone', store.markDone(key, token, retentionMs)).then((applied) => {
          // As in one try block: a throw while noting the result counts as a failed markDone.
          try {
            noteMarkDone(applied, eventId);
            return outcome;
          } catch (error) {
            return failed(error);
          }
        }, failed);
      } catch (error) {
        return Promise.resolve(failed(error));
      }
    },
    // Asked at each delivery, not once: a method replaced after the receiver was built (a test's
    // spy) must be the one called. Four comparisons and a cached object.
    get now() {
      return nowCalls !== undefined && storeCallsNow(store) !== undefined ? nowCalls : undefined;
    },
  };

  /** A fenced markDone: this delivery outran its lease and another took the event over. False then. */
  function noteMarkDone(applied: boolean | void, eventId: string): boolean {
    if (applied !== false) return true;
    onBookkeeping?.('lease-lost');
    warn(
      'warn',
      'lease-lost',
      { eventId, leaseMs },
      'the handlers succeeded after their lease ran out and another delivery took the event over; its outcome decides. Raise leaseMs above your slowest handler',
    );
    return false;
  }

  /**
   * The handlers succeeded and the answer is 200, but the store did not record it: until it does, a
   * redelivery after the lease would run them again. Retried, spaced out, within half the lease (so
   * the lease still holds redeliveries off meanwhile), then given up on with an error.
   */
  async function retryMarkDone(key: string, token: string, eventId: string): Promise<void> {
    let refused = false;
    const attempt = await retrySpaced(async () => {
      refused = !noteMarkDone(await bounded('markDone', store.markDone(key, token, retentionMs)), eventId);
    }, retryWindowMs);
    // A retry the store answered but refused recorded nothing: lease-lost said so, not a recovery.
    if (attempt > 0 && refused) return;
    if (attempt > 0) {
      onBookkeeping?.('mark-done-recovered');
      log.info({ eventId, attempt }, 'marked the event done on a retry');
      return;
    }
    onBookkeeping?.('mark-done-failed');
    log.error(
      { eventId, leaseMs },
      'gave up marking the event done: a redelivery after its lease ends runs its handlers again. Check the idempotency store',
    );
  }
}
