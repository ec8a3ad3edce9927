import type { IdempotencyStore } from '../../idempotency/idempotency-store';
import type { RateLimitedLog } from '../../rate-limited-log';
import { withTimeout } from '../../with-timeout';

/** A store call bounded by `storeTimeoutMs`; a late success goes to `late`, to be undone. */
export type BoundedCall = <T>(what: string, pending: Promise<T>, late?: (value: T) => void) => Promise<T>;

/**
 * Bounds every call to `store` by `storeTimeoutMs`. A store that says it answers at once (the
 * in-memory one) cannot hang, so it gets no timer on the hot path. Call it only inside a `try`, so a store method that
 * throws instead of rejecting is caught there.
 */
export function boundedCall(store: IdempotencyStore | false, storeTimeoutMs: number): BoundedCall {
  if (store !== false && store.answersAtOnce === true) return (_what, pending) => pending;
  return (what, pending, late) =>
    withTimeout(pending, storeTimeoutMs, `the idempotency store's ${what}`, late);
}

/** Logs (rate-limited) that the store failed before anything ran, and says so. */
export function storeUnavailable(warn: RateLimitedLog, eventId: string, error: unknown): 'unavailable' {
  warn(
    'error',
    'store-unavailable',
    { eventId, err: error },
    'the idempotency store is unavailable; answering 503',
  );
  return 'unavailable';
}
