import { checkOptionKeys } from '../check-option-keys';
import type { EmulatedDelivery } from './emulator-types';

/** How long a wait of the emulator may take. */
export interface WaitOptions {
  /** Defaults to `10_000` ms; past it the wait rejects, saying what was still pending. */
  timeoutMs?: number;
}

/** Polls `done` until it holds; past `timeoutMs` rejects, saying what is still pending. */
export function waitUntil(done: () => boolean, options: WaitOptions, pending: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    checkOptionKeys(options, ['timeoutMs'], 'emulator wait');
    const timeoutMs = options.timeoutMs ?? 10_000;
    const check = () => {
      if (!done()) return false;
      cleanup();
      resolve();
      return true;
    };
    const interval = setInterval(check, 10);
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`[service-webhooks] emulator: still waiting after ${timeoutMs} ms: ${pending()}`));
    }, timeoutMs);
    const cleanup = () => {
      clearInterval(interval);
      clearTimeout(timer);
    };
    check();
  });
}

/** Which deliveries `waitForDeliveries` waits for; every one when empty. */
export interface DeliveryFilter {
  /** Only the deliveries of this event. */
  eventId?: string;
  /** Only the deliveries to this webhook. */
  webhookId?: string;
  /** How many matching deliveries must exist. Defaults to `1`. */
  count?: number;
}

/** Resolves once every delivery matching `filter` has been acknowledged or dropped (and at least `count` exist). */
export function waitForDeliveries(
  deliveries: readonly EmulatedDelivery[],
  filter: DeliveryFilter,
  options: WaitOptions,
): Promise<EmulatedDelivery[]> {
  try {
    checkOptionKeys(filter, ['eventId', 'webhookId', 'count'], 'emulator.waitForDeliveries');
  } catch (error) {
    return Promise.reject(error as Error);
  }
  const matching = () =>
    deliveries.filter(
      (d) =>
        (filter.eventId === undefined || d.eventId === filter.eventId) &&
        (filter.webhookId === undefined || d.webhookId === filter.webhookId),
    );
  const done = () => {
    const found = matching();
    return found.length >= (filter.count ?? 1) && found.every((d) => d.state !== 'pending');
  };
  const pending = () => `${matching().filter((d) => d.state === 'pending').length} deliveries pending`;
  return waitUntil(done, options, pending).then(matching);
}
