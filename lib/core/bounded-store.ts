import type { ClaimResult, IdempotencyStore } from '../idempotency/idempotency-store';
import { MemoryStore } from '../idempotency/memory-store';
import type { ResolvedLogger } from '../logger';
import type { ResolvedDispatchOptions } from './dispatch-options';
import type { RateLimitedLog } from './rate-limited-log';
import type { Outcome } from './run-handlers';
import { withTimeout } from './with-timeout';

/** The store as dispatch uses it: every call bounded, every failure turned into an answer or a log line. */
export interface BoundedStore {
  /** The claim's result, or `'unavailable'` when the store failed or did not answer in time. */
  claim(key: string, token: string, eventId: string): Promise<ClaimResult | 'unavailable'>;
  /** Marks the key done after success, or releases it after failure; never rejects. */
  settle(key: string, token: string, outcome: Outcome, eventId: string): Promise<Outcome>;
}

/**
 * Bounds every store call by `storeTimeoutMs`. A claim that lands after we stopped waiting is given
 * back, or it would hold the event for a whole lease; the in-memory store answers at once and cannot
 * hang, so it gets no timer on the hot path.
 */
export function boundedStore(
  options: ResolvedDispatchOptions,
  log: ResolvedLogger,
  warn: RateLimitedLog,
): BoundedStore {
  const { leaseMs, retentionMs, storeTimeoutMs } = options;
  const store = options.store as IdempotencyStore;
  const inMemory = store instanceof MemoryStore;

  /** Called only inside a `try`, so a store method that throws instead of rejecting is caught there. */
  function bounded<T>(what: string, pending: Promise<T>, late?: (value: T) => void): Promise<T> {
    if (inMemory) return pending;
    return withTimeout(pending, storeTimeoutMs, `the idempotency store's ${what}`, late);
  }

  /** A claim that lands after we stopped waiting is released, or it would hold the event a whole lease. */
  const giveBack = (key: string, token: string) => (late: ClaimResult) => {
    if (late !== 'claimed') return;
    Promise.resolve()
      .then(() => store.release(key, token))
      .catch(() => undefined);
  };

  return {
    async claim(key, token, eventId) {
      try {
        const pending = store.claim(key, token, leaseMs);
        return await bounded('claim', pending, inMemory ? undefined : giveBack(key, token));
      } catch (error) {
        warn(
          'error',
          'store-unavailable',
          { eventId, err: error },
          'the idempotency store is unavailable; answering 503',
        );
        return 'unavailable';
      }
    },
    async settle(key, token, outcome, eventId) {
      try {
        if (outcome.ok) await bounded('markDone', store.markDone(key, token, retentionMs));
        else await bounded('release', store.release(key, token));
      } catch (error) {
        log.error(
          { eventId, err: error },
          outcome.ok
            ? 'could not mark the event done; a redelivery may run its handlers again'
            : 'could not release the event; a redelivery waits for its lease to end',
        );
      }
      return outcome;
    },
  };
}
