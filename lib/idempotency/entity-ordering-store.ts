import type { IdempotencyStore } from './idempotency-store';

/**
 * Where an event stands in its entity's history: its `time` as fixed-width digits that sort as the
 * instants do (see `eventPosition`), and its id, which breaks ties so the outcome never depends on
 * arrival order.
 */
export interface EntityPosition {
  /** The event's `time`, as fixed-width digits in UTC that sort as the instants do. */
  time: string;
  /** The event's id: of two events at the same instant, the one whose id sorts last is the newer. */
  eventId: string;
}

/** What {@link EntityOrderingStore.leaseEntity} found. */
export type EntityLeaseResult =
  /** The event is newer than the entity's newest processed one, and the entity is now leased to the caller. */
  | 'leased'
  /** The entity's newest processed event is this one or newer: the ordered handlers must not run. */
  | 'stale'
  /** Another delivery holds the entity's lease: its ordered handlers are running now. */
  | 'busy';

/**
 * The optional part of a store that `{ ordering: 'newest-wins' }` handlers need: a lease per entity
 * (so two events of one entity never run such a handler at once, across instances) and the entity's
 * newest processed position (so an older event is skipped). Each method is one atomic step, fenced
 * by the lease's token as `claim` / `markDone` / `release` are. Positions compare as UTF-8 bytes: `time` first
 * (fixed width), then the id as RedisStore and PostgresStore write it (a long or odd id becomes its
 * hash), so every store breaks a tie of times the same way (`runStoreContract` checks it).
 */
export interface EntityOrderingStore {
  /**
   * Atomically: `'stale'` when the entity's newest processed position is at or after `position`
   * (nothing changes); else `'busy'` when another token holds an unexpired lease; else leases the
   * entity to `token` for `leaseMs` milliseconds and answers `'leased'`.
   */
  leaseEntity(
    key: string,
    token: string,
    leaseMs: number,
    position: EntityPosition,
  ): Promise<EntityLeaseResult>;
  /**
   * After the ordered handlers succeeded, atomically: raises the entity's newest processed position
   * to `position` (never lowers it), keeps it at least `retentionMs` milliseconds, and frees the
   * lease if `token` holds it. Resolves `false` when another token holds the lease (this delivery
   * outran its lease and another took the entity over); the position is raised all the same, since
   * the success happened.
   */
  advanceEntity(
    key: string,
    token: string,
    position: EntityPosition,
    retentionMs: number,
  ): Promise<boolean | void>;
  /** Frees the entity after a failure, advancing nothing; only if `token` holds the lease. */
  releaseEntity(key: string, token: string): Promise<void>;
  /**
   * Optional. Atomically: when `token` holds an unexpired lease on the entity, it now ends `leaseMs`
   * milliseconds from now (the entity is kept at least that long) and the answer is `true`; else
   * `false`, changing nothing. Ordered handlers that run past a lease keep their entity with it; a
   * worker on a store without it warns at start, and such a handler may overlap a newer event of its entity.
   */
  renewEntity?(key: string, token: string, leaseMs: number): Promise<boolean>;
}

const METHODS = ['leaseEntity', 'advanceEntity', 'releaseEntity'] as const;

/** True when the store has every entity operation (a store of your own may have none). */
export function hasEntityOrdering(
  store: IdempotencyStore | false,
): store is IdempotencyStore & EntityOrderingStore {
  if (store === false) return false;
  const methods = store as unknown as Record<string, unknown>;
  return METHODS.every((m) => typeof methods[m] === 'function');
}
