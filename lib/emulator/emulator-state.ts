import type { DeliveryEnvelope } from '../testing/build-event';
import type { Emulator } from './emulator';
import type { AttemptRecord, DeliveryRecord, EmulatedWebhook } from './emulator-types';

/** One event as the web console and `service-webhooks events` show it. */
export interface EventView {
  event: DeliveryEnvelope;
  deliveries: Omit<DeliveryRecord, 'envelope'>[];
  attempts: AttemptRecord[];
}

export interface EmulatorState {
  url: string;
  accountId: string;
  webhooks: Omit<EmulatedWebhook, 'privateKey'>[];
  /** Most recent first. */
  events: EventView[];
}

/** How many events a state answer carries. */
const SHOWN_EVENTS = 200;

export const withoutKey = ({
  privateKey: _p,
  ...webhook
}: EmulatedWebhook): Omit<EmulatedWebhook, 'privateKey'> => webhook;

/** One event with its deliveries and attempts. */
export function eventView(emulator: Emulator, event: DeliveryEnvelope): EventView {
  return {
    event,
    deliveries: emulator.deliveries
      .filter((d) => d.eventId === event.id)
      .map(({ envelope: _e, ...delivery }) => delivery),
    attempts: emulator.attempts.filter((a) => a.eventId === event.id),
  };
}

/** Everything the web console shows, tokens left out. */
export function emulatorState(emulator: Emulator): EmulatorState {
  const recent = emulator.events.slice(-SHOWN_EVENTS).reverse();
  return {
    url: emulator.url,
    accountId: emulator.account.accountId,
    webhooks: emulator.listWebhooks().map(withoutKey),
    events: recent.map((event) => eventView(emulator, event)),
  };
}
