import type { ResolvedLogger } from '../logger';
import type { DeliveryScheduler } from './delivery-scheduler';
import type { AttemptRecord, EmulatedDelivery, EmulatorChange } from './emulator-types';
import { publicView, withoutKey, type StoredWebhook } from './webhook-registry';

/** Who hears of the emulator's changes: the web console's streams, the CLI, a test. */
export class ChangeFeed {
  readonly #listeners = new Set<(change: EmulatorChange) => void>();

  constructor(private readonly logger: ResolvedLogger) {}

  subscribe(listener: (change: EmulatorChange) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** A listener that throws is logged and kept away from the delivery it was told about. */
  publish(change: EmulatorChange): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        this.logger.error(
          { kind: change.kind, error: (error as Error)?.message },
          'emulator: a listener threw',
        );
      }
    }
  }

  /** Tells of a webhook registered, changed (its handshake included) or deleted, without its token. */
  webhookChanged(change: StoredWebhook | { deleted: string }): void {
    this.publish(
      'deleted' in change
        ? { kind: 'webhook-deleted', id: change.deleted }
        : { kind: 'webhook', webhook: withoutKey(publicView(change)) },
    );
  }

  /** Tells of each attempt as it starts and ends, and of each delivery as it settles. */
  follow(scheduler: DeliveryScheduler): void {
    scheduler.on('sending', ({ delivery, url }: { delivery: EmulatedDelivery; url: string }) =>
      this.publish({
        kind: 'sending',
        eventId: delivery.eventId,
        type: delivery.type,
        webhookId: delivery.webhookId,
        url,
        attempt: delivery.attempts,
      }),
    );
    scheduler.on('attempt', (attempt: AttemptRecord) => this.publish({ kind: 'attempt', attempt }));
    scheduler.on('settled', ({ envelope: _e, ...delivery }: EmulatedDelivery) =>
      this.publish({ kind: 'delivery', delivery }),
    );
  }

  clear(): void {
    this.#listeners.clear();
  }
}
