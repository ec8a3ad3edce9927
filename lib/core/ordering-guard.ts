import type { EventHandler, MatchedHandlers } from '../events/event-router';
import type { AnyWebhookEvent } from '../events/webhook-event';
import {
  hasEntityOrdering,
  type EntityLeaseResult,
  type EntityOrderingStore,
  type EntityPosition,
} from '../idempotency/entity-ordering-store';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import type { ResolvedLogger } from '../logger';
import type { BookkeepingEvent } from './delivery-record';
import { eventPosition } from './event-position';
import { claimToken, idempotencyKey } from './idempotency-key';
import type { RateLimitedLog } from './rate-limited-log';
import { retrySpaced } from './retry-spaced';
import type { Outcome } from './run-handlers';
import { boundedCall, storeUnavailable } from './store-call';

/** What the guard decided, and the handlers' outcome when any ran. */
export type GuardedRun =
  /**
   * Handlers ran. `ordering`: `'newest'` when the ordered ones ran under the entity's lease,
   * `'stale'` when they were skipped and only the others ran, absent when none is ordered or the
   * event has no entity or no `time` (then every handler ran, unguarded).
   */
  | { kind: 'ran'; outcome: Outcome; ordering?: 'newest' | 'stale' }
  /** Older than the entity's newest processed event, and every matching handler is ordered: none ran. */
  | { kind: 'stale' }
  /** Another event of the entity is running its ordered handlers: nothing ran; try again later. */
  | { kind: 'busy' }
  /** The store failed or did not answer in time: nothing ran. */
  | { kind: 'unavailable' };

export interface OrderingGuardOptions {
  store: IdempotencyStore | false;
  /** The idempotency `name`: entity keys are scoped by it as event keys are. */
  scope: string;
  leaseMs: number;
  retentionMs: number;
  storeTimeoutMs: number;
}

export interface OrderingGuard {
  /**
   * Runs the matched handlers of `event` through `runHandlers`, the ordered ones only when the event
   * is the newest of its entity: the entity is leased while they run, and its newest mark advances
   * (releasing the lease) only if they all succeed. Never rejects. The caller settles the event's own
   * idempotency claim from the answer; the inbox worker calls it the same way.
   */
  run(
    event: AnyWebhookEvent,
    matched: MatchedHandlers,
    runHandlers: (handlers: readonly EventHandler<AnyWebhookEvent>[]) => Promise<Outcome>,
    linger?: (background: Promise<void>) => void,
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
  const { store, scope, leaseMs, retentionMs, storeTimeoutMs } = options;
  const entities = hasEntityOrdering(store) ? (store as EntityOrderingStore) : undefined;
  const bounded = boundedCall(store, storeTimeoutMs);

  async function lease(
    key: string,
    token: string,
    position: EntityPosition,
    eventId: string,
  ): Promise<EntityLeaseResult | 'unavailable'> {
    const giveBack = (late: EntityLeaseResult) => {
      if (late === 'leased') Promise.resolve(entities?.releaseEntity(key, token)).catch(() => undefined);
    };
    try {
      return await bounded('leaseEntity', entities!.leaseEntity(key, token, leaseMs, position), giveBack);
    } catch (error) {
      return storeUnavailable(warn, eventId, error);
    }
  }

  /** Success: raise the mark and free the lease in one step; a failed call is retried in the background. */
  async function advance(
    key: string,
    token: string,
    position: EntityPosition,
    eventId: string,
    linger?: (p: Promise<void>) => void,
  ) {
    const once = async () => {
      const applied = await bounded(
        'advanceEntity',
        entities!.advanceEntity(key, token, position, retentionMs),
      );
      if (applied !== false) return;
      onBookkeeping?.('lease-lost');
      warn(
        'warn',
        'entity-lease-lost',
        { eventId, leaseMs },
        "the ordered handlers succeeded after the entity's lease ran out and another event of it started meanwhile. Raise leaseMs above your slowest handler",
      );
    };
    try {
      await once();
    } catch (error) {
      log.warn(
        { eventId, err: error },
        "could not advance the entity's newest mark; retrying in the background",
      );
      const background = retrySpaced(once, leaseMs / 2).then((attempt) => {
        if (attempt === 0)
          log.error(
            { eventId, leaseMs },
            "gave up advancing the entity's newest mark: an older event of it may run its ordered handlers once its lease ends. Check the idempotency store",
          );
      });
      linger?.(background);
    }
  }

  async function release(key: string, token: string, eventId: string) {
    try {
      await bounded('releaseEntity', entities!.releaseEntity(key, token));
    } catch (error) {
      log.error(
        { eventId, err: error },
        'could not release the entity; its next event waits for the lease to end',
      );
    }
  }

  const safely = (run: () => Promise<Outcome>) =>
    run().catch((error: unknown): Outcome => ({ ok: false, errors: [error], retryLater: undefined }));

  return {
    async run(event, matched, runHandlers, linger) {
      const position = matched.ordered.length === 0 ? null : eventPosition(event);
      if (position === null || event.entity === null) {
        return { kind: 'ran', outcome: await safely(() => runHandlers(matched.handlers)) };
      }
      if (entities === undefined) {
        log.error({ eventId: event.id, type: event.type }, unsupported().message);
        return { kind: 'ran', outcome: { ok: false, errors: [unsupported()], retryLater: undefined } };
      }
      const key = idempotencyKey(scope, event.entity.kind, event.entity.id);
      const token = claimToken();
      const leased = await lease(key, token, position, event.id);
      if (leased === 'unavailable' || leased === 'busy') return { kind: leased };
      if (leased === 'stale') {
        log.info(
          { eventId: event.id, type: event.type, entity: event.entity, time: event.time },
          'stale: the entity already processed a newer event; its ordered handlers are skipped',
        );
        if (matched.unordered.length === 0) return { kind: 'stale' };
        return {
          kind: 'ran',
          outcome: await safely(() => runHandlers(matched.unordered)),
          ordering: 'stale',
        };
      }
      const outcome = await safely(() => runHandlers(matched.handlers));
      await (outcome.ok ? advance(key, token, position, event.id, linger) : release(key, token, event.id));
      return { kind: 'ran', outcome, ordering: 'newest' };
    },
  };
}
