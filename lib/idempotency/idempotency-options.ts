import type { IdempotencyStore } from './idempotency-store';

/**
 * How processed events are remembered, so a redelivery does not run the handlers again. Given as
 * `idempotency: { store, scope, leaseMs, retentionMs, timeoutMs }`; a bare store
 * (`idempotency: new RedisStore(…)`) is short for `{ store }`, and `false` turns remembering off.
 */
export interface IdempotencyOptions {
  /**
   * Where claims and processed events are kept; `false` turns that off (every delivery runs the
   * handlers). Defaults, when left out, to a new `MemoryStore`, which serves one instance;
   * `store: undefined` written out is refused (a store that was meant to be there and is not).
   */
  store?: IdempotencyStore | false;
  /**
   * Scopes idempotency keys, so two receivers sharing one store never share keys; a worker given the
   * same scope orders entities under the receiver's keys. Defaults to `''`.
   */
  scope?: string;
  /**
   * How long a claim holds an event while its handlers run; must exceed `timeoutMs` of the receiver
   * (of the worker, in `inbox.startWorker`). Defaults to `max(5 × timeoutMs, 60_000)` ms (in a
   * worker, `2 × timeoutMs`).
   */
  leaseMs?: number;
  /** How long a processed event is remembered. Defaults to 7 hours, past the Service's 6-hour retry window. */
  retentionMs?: number;
  /**
   * The bound on every store call (and on an inbox's enqueue): one that has not settled by then
   * counts as failed (503 + `Retry-After` on claim; markDone and release are logged). Defaults to
   * `5_000` ms.
   */
  timeoutMs?: number;
}
