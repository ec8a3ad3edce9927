import type { IdempotencyOptions } from '../../idempotency/idempotency-options';
import type { IdempotencyStore } from '../../idempotency/idempotency-store';
import { MemoryStore } from '../../idempotency/memory-store';
import type { Inbox } from '../../inbox/inbox';
import type { Logger } from '../../logger';
import { OptionsError } from '../../options-error';
import { checkMovedOptions, idempotencySettings, STORE_METHODS } from './idempotency-settings';

/** Options of {@link dispatchEvent}; the receiver takes the same ones. */
export interface DispatchEventOptions {
  /**
   * How long the handlers may run before the delivery is answered 503 (the Service retries it). They
   * keep running; their outcome still decides whether the event is done. Defaults to `10_000` ms.
   */
  timeoutMs?: number;
  /**
   * Remembers processed events so a redelivery does not run the handlers again:
   * `{ store, scope, leaseMs, retentionMs, timeoutMs }` ({@link IdempotencyOptions}), a bare store as
   * short for `{ store }`, or `false` to turn it off (every delivery runs the handlers). Defaults to a
   * new {@link MemoryStore} with the defaults of {@link IdempotencyOptions}.
   */
  idempotency?: IdempotencyOptions | IdempotencyStore | false;
  /** Seconds sent in `Retry-After` on 409 and 503. Defaults to `30`. */
  retryAfterSeconds?: number;
  /** Where failures are logged. Defaults to the console. */
  logger?: Logger | false | undefined;
  /**
   * A durable queue (`bullmqInbox()`, `pgBossInbox()`): each new event is enqueued and answered
   * `200 {"status":"queued"}` once the queue holds it, and workers started with
   * `inbox.startWorker(router)` run the handlers, with retries and dead letters. An enqueue that fails
   * or takes longer than `idempotency.timeoutMs` is answered 503 + `Retry-After`. Defaults to none:
   * the handlers run inside the request.
   */
  inbox?: Inbox;
  /**
   * How far an event's `time` may lie past the moment it was received (the sender's clock ahead of
   * ours) and still place it in its entity's history, for `{ ordering: 'newest-wins' }` handlers. A
   * later `time` (one dated 9999, say) still runs the handlers, but counts as received + this, so it
   * cannot make every real event after it `stale`; it is logged and counted (`future-time`).
   * Defaults to `300_000` ms (5 minutes).
   */
  maxFutureSkewMs?: number;
}

export const DISPATCH_OPTION_KEYS = [
  'timeoutMs',
  'idempotency',
  'retryAfterSeconds',
  'logger',
  'inbox',
  'maxFutureSkewMs',
] as const;

export interface ResolvedDispatchOptions {
  timeoutMs: number;
  leaseMs: number;
  retentionMs: number;
  storeTimeoutMs: number;
  /** The `Retry-After` header value. */
  retryAfter: string;
  scope: string;
  store: IdempotencyStore | false;
  inbox: Inbox | undefined;
  maxFutureSkewMs: number;
}

/** Clocks that disagree by more than this are broken, not skewed; a few minutes is the default. */
const DEFAULT_MAX_FUTURE_SKEW_MS = 5 * 60 * 1000;

/** The Service's 6-hour retry window and a margin: no delivery of an event comes again after it. */
export const RETRY_WINDOW_MS = 7 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** setTimeout's largest delay; a longer one fires at once. */
const MAX_DELAY = 2 ** 31 - 1;

function positive(value: unknown, name: string, where: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > max) {
    throw new OptionsError(
      'ERR_SW_TIMEOUT',
      where,
      `${name} must be a positive number of milliseconds${max === MAX_DELAY ? ' up to 2^31-1' : ''} (got ${String(value)})`,
    );
  }
  return value;
}

/** A skew of 0 is allowed (a `time` never ahead of its receipt); at most a day, or it bounds little. */
function futureSkew(value: unknown, where: string): number {
  if (value === undefined) return DEFAULT_MAX_FUTURE_SKEW_MS;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > DAY_MS) {
    throw new OptionsError(
      'ERR_SW_TIMEOUT',
      where,
      `maxFutureSkewMs must be a number of milliseconds from 0 to 86_400_000 (a day), e.g. 300_000 for 5 minutes (got ${String(value)})`,
    );
  }
  return value;
}

function checkStore(store: unknown, where: string): IdempotencyStore | false {
  if (store === false) return false;
  if (
    typeof store !== 'object' ||
    store === null ||
    STORE_METHODS.some((m) => typeof (store as Record<string, unknown>)[m] !== 'function')
  ) {
    throw new OptionsError(
      'ERR_SW_STORE',
      where,
      'idempotency must be an IdempotencyStore (claim, markDone, release, get), false, or { store, scope, leaseMs, retentionMs, timeoutMs }',
    );
  }
  return store as IdempotencyStore;
}

function checkInbox(inbox: unknown, where: string): Inbox | undefined {
  if (inbox === undefined) return undefined;
  const methods = ['enqueue', 'startWorker', 'deadLetters', 'replay'] as const;
  if (
    typeof inbox !== 'object' ||
    inbox === null ||
    methods.some((m) => typeof (inbox as Record<string, unknown>)[m] !== 'function')
  ) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      "inbox must be an Inbox: bullmqInbox({ connection }) from 'service-webhooks/bullmq' or pgBossInbox({ connectionString }) from 'service-webhooks/pg-boss'",
    );
  }
  return inbox as Inbox;
}

/** Checks and completes the options once, at construction. */
export function resolveDispatchOptions(
  options: DispatchEventOptions,
  where: string,
): ResolvedDispatchOptions {
  checkMovedOptions(options, where);
  const settings = idempotencySettings(options.idempotency, where);
  const timeoutMs = positive(options.timeoutMs ?? 10_000, 'timeoutMs', where, MAX_DELAY);
  const leaseMs = positive(settings.leaseMs ?? Math.max(5 * timeoutMs, 60_000), 'idempotency.leaseMs', where);
  const retentionMs = positive(settings.retentionMs ?? RETRY_WINDOW_MS, 'idempotency.retentionMs', where);
  const storeTimeoutMs = positive(settings.timeoutMs ?? 5_000, 'idempotency.timeoutMs', where, MAX_DELAY);
  const retryAfter = String(Math.ceil(positive(options.retryAfterSeconds ?? 30, 'retryAfterSeconds', where)));
  if (leaseMs <= timeoutMs) {
    throw new OptionsError(
      'ERR_SW_TIMEOUT',
      where,
      'idempotency.leaseMs must be longer than timeoutMs, or a slow handler could run twice at once',
    );
  }
  if (settings.scope !== undefined && typeof settings.scope !== 'string') {
    throw new OptionsError('ERR_SW_NAME', where, 'idempotency.scope must be a string');
  }
  const scope = settings.scope ?? '';
  const store = checkStore(
    settings.store === undefined ? new MemoryStore({ logger: options.logger }) : settings.store,
    where,
  );
  const inbox = checkInbox(options.inbox, where);
  const maxFutureSkewMs = futureSkew(options.maxFutureSkewMs, where);
  return {
    timeoutMs,
    leaseMs,
    retentionMs,
    storeTimeoutMs,
    retryAfter,
    scope,
    store,
    inbox,
    maxFutureSkewMs,
  };
}
