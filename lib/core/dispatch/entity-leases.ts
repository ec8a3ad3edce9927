import type {
  EntityLeaseResult,
  EntityOrderingStore,
  EntityPosition,
} from '../../idempotency/entity-ordering-store';
import type { IdempotencyStore } from '../../idempotency/idempotency-store';
import type { ResolvedLogger } from '../../logger';
import type { BookkeepingEvent } from '../../idempotency/bookkeeping-event';
import type { RateLimitedLog } from '../../rate-limited-log';
import { retrySpaced } from './retry-spaced';
import { boundedCall, storeUnavailable } from './store-call';

/**
 * The ordering guard's store calls, each bounded by `storeTimeoutMs` and never rejecting: a failure
 * becomes an answer (`'unavailable'`), a background retry (advance) or a log line (release).
 */
export function entityLeases(
  entities: IdempotencyStore & EntityOrderingStore,
  options: { leaseMs: number; retentionMs: number; storeTimeoutMs: number },
  log: ResolvedLogger,
  warn: RateLimitedLog,
  onBookkeeping?: (event: BookkeepingEvent) => void,
) {
  const { leaseMs, retentionMs, storeTimeoutMs } = options;
  const bounded = boundedCall(entities, storeTimeoutMs);

  async function lease(
    key: string,
    token: string,
    position: EntityPosition,
    eventId: string,
  ): Promise<EntityLeaseResult | 'unavailable'> {
    const giveBack = (late: EntityLeaseResult) => {
      // A lease that lands after we stopped waiting is given back, or it would hold the entity.
      if (late !== 'leased') return;
      Promise.resolve()
        .then(() => entities.releaseEntity(key, token))
        .catch(() => undefined);
    };
    try {
      return await bounded('leaseEntity', entities.leaseEntity(key, token, leaseMs, position), giveBack);
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
        entities.advanceEntity(key, token, position, retentionMs),
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
      await bounded('releaseEntity', entities.releaseEntity(key, token));
    } catch (error) {
      log.error(
        { eventId, err: error },
        'could not release the entity; its next event waits for the lease to end',
      );
    }
  }

  /**
   * Extends the lease `token` holds by `leaseMs`, bounded and never rejecting: `false` when it was lost,
   * `'unavailable'` (failed, or no answer in time) to try again at the next tick; undefined when the
   * store cannot renew an entity's lease.
   */
  const renewEntity = entities.renewEntity?.bind(entities);
  const renew =
    renewEntity === undefined
      ? undefined
      : (key: string, token: string) =>
          Promise.resolve()
            .then(() => bounded('renewEntity', renewEntity(key, token, leaseMs)))
            .then(
              (renewed) => renewed,
              () => 'unavailable' as const,
            );

  return { lease, advance, release, renew };
}
