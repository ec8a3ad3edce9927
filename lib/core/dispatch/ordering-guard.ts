import type { EventHandler, MatchedHandlers } from '../../events/event-router';
import type { AnyWebhookEvent } from '../../events/webhook-event';
import { hasEntityOrdering } from '../../idempotency/entity-ordering-store';
import type { IdempotencyStore } from '../../idempotency/idempotency-store';
import type { ResolvedLogger } from '../../logger';
import type { BookkeepingEvent } from '../../idempotency/bookkeeping-event';
import { eventPosition } from './event-position';
import { entityLeases } from './entity-leases';
import { keepClaim } from './keep-claim';
import { claimToken } from '../../idempotency/claim-token';
import { idempotencyKey } from '../../idempotency/store-keys';
import type { RateLimitedLog } from '../../rate-limited-log';
import type { Outcome } from './run-handlers';

/** What the guard decided, and the handlers' outcome when any ran. */
export type GuardedRun =
  /**
   * Handlers ran. `ordering`: `'newest'` when the ordered ones ran under the entity's lease,
   * `'stale'` when they were skipped and only the others ran, absent when none is ordered or the
   * event has no entity or no `time` (then every handler ran, unguarded).
   */
  | { kind: 'ran'; outcome: Outcome; ordering?: 'newest' | 'stale'; futureTime?: true }
  /** Older than the entity's newest processed event, and every matching handler is ordered: none ran. */
  | { kind: 'stale'; futureTime?: true }
  /** Another event of the entity is running its ordered handlers: nothing ran; try again later. */
  | { kind: 'busy' }
  /** The store failed or did not answer in time: nothing ran. */
  | { kind: 'unavailable' };

const OK: Outcome = { ok: true };
/** Nothing ran: the event's claim is given back so a redelivery runs the handlers. */
const NOTHING_RAN: Outcome = { ok: false, errors: [], retryLater: undefined };
export const ran = (outcome: Outcome): GuardedRun => ({ kind: 'ran', outcome });
export const thrown = (error: unknown): GuardedRun =>
  ran({ ok: false, errors: [error], retryLater: undefined });

/**
 * Whether every ordered handler that ran succeeded: then the entity's mark advances although another
 * handler failed (the event's retry finds it stale and runs only the unordered ones left). An outcome
 * that does not say which failed counts as an ordered failure.
 */
function orderedSucceeded(outcome: Outcome, matched: MatchedHandlers): boolean {
  if (outcome.ok) return true;
  const { failed } = outcome;
  return failed !== undefined && failed.length > 0 && !failed.some((h) => matched.ordered.includes(h));
}

/** The outcome the event's own idempotency claim is settled with: a stale event is done, as handled. */
export function claimOutcome(guarded: GuardedRun): Outcome {
  if (guarded.kind === 'ran') return guarded.outcome;
  return guarded.kind === 'stale' ? OK : NOTHING_RAN;
}

export interface OrderingGuardOptions {
  store: IdempotencyStore | false;
  /** The idempotency `name`: entity keys are scoped by it as event keys are. */
  scope: string;
  leaseMs: number;
  /**
   * How long a try's handlers may run: the entity's lease is renewed while the ordered ones run, up
   * to `timeoutMs + leaseMs` after it was taken (the bound a try's own claim is renewed to).
   */
  timeoutMs: number;
  retentionMs: number;
  storeTimeoutMs: number;
  /**
   * How far past its receipt an event's `time` may lie and still be its position: a later `time`
   * counts as receipt + this (`futureTime` on the answer), so it cannot freeze the entity.
   */
  maxFutureSkewMs: number;
}

export interface OrderingGuard {
  /**
   * Runs the matched handlers of `event` through `runHandlers`, the ordered ones only when the event
   * is the newest of its entity: the entity is leased while they run, and its newest mark advances
   * (releasing the lease) only if the ordered ones all succeed, whatever the others did. Never rejects. The caller settles the event's own
   * idempotency claim from the answer. A queue worker calls it the same way, when it runs the job:
   * `ran` ok or `stale` completes the job, `ran` failed fails it (retried), `busy` and `unavailable`
   * put it back for later without counting a failure of the handlers. `receivedAt` (epoch ms) is when
   * the receiver took the event in: a worker gives the queued delivery's, so a replay weeks later is
   * bounded as it was when it arrived.
   */
  run(
    event: AnyWebhookEvent,
    matched: MatchedHandlers,
    runHandlers: (handlers: readonly EventHandler<AnyWebhookEvent>[]) => Promise<Outcome>,
    linger?: (background: Promise<void>) => void,
    receivedAt?: number,
  ): Promise<GuardedRun>;
}

const unsupported = () =>
  new Error(
    "[service-webhooks] a handler with { ordering: 'newest-wins' } needs an idempotency store with entity operations (leaseEntity, advanceEntity, releaseEntity): use MemoryStore, RedisStore or PostgresStore, or register the handler without ordering",
  );

/** The per-entity ordering guard of `.on(type, handler, { ordering: 'newest-wins' })`. */
export function orderingGuard(
  options: OrderingGuardOptions,
  log: ResolvedLogger,
  warn: RateLimitedLog,
  onBookkeeping?: (event: BookkeepingEvent) => void,
): OrderingGuard {
  const { store, scope } = options;
  const leases = hasEntityOrdering(store)
    ? entityLeases(store, options, log, warn, onBookkeeping)
    : undefined;

  const safely = (run: () => Promise<Outcome>) =>
    run().catch((error: unknown): Outcome => ({ ok: false, errors: [error], retryLater: undefined }));

  async function guarded(
    event: AnyWebhookEvent,
    matched: MatchedHandlers,
    runHandlers: (handlers: readonly EventHandler<AnyWebhookEvent>[]) => Promise<Outcome>,
    linger: ((background: Promise<void>) => void) | undefined,
    receivedAt: number,
  ): Promise<GuardedRun> {
    const bounded = eventPosition(event, receivedAt + options.maxFutureSkewMs);
    if (bounded === null || event.entity === null) {
      return { kind: 'ran', outcome: await safely(() => runHandlers(matched.handlers)) };
    }
    const position = { time: bounded.time, eventId: bounded.eventId };
    const future = bounded.future ? ({ futureTime: true } as const) : {};
    if (bounded.future) {
      onBookkeeping?.('future-time');
      warn(
        'warn',
        'future-time',
        { eventId: event.id, type: event.type, time: event.time, maxFutureSkewMs: options.maxFutureSkewMs },
        "an event's time is later than its receipt plus maxFutureSkewMs: its ordered handlers run, but the entity's newest mark is held at that bound. Check the sender's clock",
      );
    }
    if (leases === undefined) {
      log.error({ eventId: event.id, type: event.type }, unsupported().message);
      return { kind: 'ran', outcome: { ok: false, errors: [unsupported()], retryLater: undefined } };
    }
    const key = idempotencyKey(scope, event.entity.kind, event.entity.id);
    const token = claimToken();
    const leased = await leases.lease(key, token, position, event.id);
    if (leased === 'unavailable' || leased === 'busy') return { kind: leased };
    if (leased === 'stale') {
      log.info(
        { eventId: event.id, type: event.type, entity: event.entity, time: event.time },
        'stale: the entity already processed a newer event; its ordered handlers are skipped',
      );
      if (matched.unordered.length === 0) return { kind: 'stale', ...future };
      return {
        kind: 'ran',
        outcome: await safely(() => runHandlers(matched.unordered)),
        ordering: 'stale',
        ...future,
      };
    }
    const running = safely(() => runHandlers(matched.handlers));
    // Held while they run, past the try's timeout too: a newer event of the entity waits (put back,
    // or answered busy) rather than running its ordered handlers alongside, older writing last.
    const renew = leases.renew;
    if (renew !== undefined) {
      const untilMs = Date.now() + options.timeoutMs + options.leaseMs;
      const held = { renew: () => renew(key, token), leaseMs: options.leaseMs, untilMs, what: 'the entity' };
      keepClaim(held, running, log, event.id);
    }
    const outcome = await running;
    await (orderedSucceeded(outcome, matched)
      ? leases.advance(key, token, position, event.id, linger)
      : leases.release(key, token, event.id));
    return { kind: 'ran', outcome, ordering: 'newest', ...future };
  }

  return {
    run(event, matched, runHandlers, linger, receivedAt = Date.now()) {
      // Without ordered handlers (the common case, every delivery) nothing is decided: no async layer.
      if (matched.ordered.length === 0) return runHandlers(matched.handlers).then(ran, thrown);
      return guarded(event, matched, runHandlers, linger, receivedAt);
    },
  };
}
