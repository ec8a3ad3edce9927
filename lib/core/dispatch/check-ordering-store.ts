import type { EventRouter } from '../../events/event-router';
import { hasEntityOrdering } from '../../idempotency/entity-ordering-store';
import type { IdempotencyStore } from '../../idempotency/idempotency-store';
import { OptionsError } from '../../options-error';

/**
 * At construction: a router with `{ ordering: 'newest-wins' }` handlers needs a store that can lease
 * entities. Failing here, at boot, beats a 500 for every ordered event; a handler registered after
 * construction is caught at its first event instead (answered 500, logged with the same advice).
 */
export function checkOrderingStore(router: EventRouter, store: IdempotencyStore | false): void {
  if (!router.hasOrderedHandlers || hasEntityOrdering(store)) return;
  throw new OptionsError(
    'ERR_SW_STORE',
    'ordering',
    store === false
      ? "a handler is registered with { ordering: 'newest-wins' }, which needs an idempotency store; remove idempotency: false (MemoryStore serves one instance, RedisStore or PostgresStore many)"
      : "a handler is registered with { ordering: 'newest-wins' }, but the idempotency store has no entity operations (leaseEntity, advanceEntity, releaseEntity); use MemoryStore, RedisStore or PostgresStore, add those operations to your store (runStoreContract checks them), or register the handler without ordering",
  );
}
