import type { DeliveryEnvelope } from '../events/build-event';
import type { Emulator } from './emulator';
import type { AttemptRecord, EmulatedDelivery, EmulatedWebhook } from './emulator-types';
import { withoutKey } from './webhook-registry';

/** One event as the web console and `service-webhooks events` show it. */
export interface EventView {
  event: DeliveryEnvelope;
  deliveries: Omit<EmulatedDelivery, 'envelope'>[];
  attempts: AttemptRecord[];
  /**
   * The deliveries grouped by webhook: a resend is a second delivery of the same event to the same
   * webhook, shown as one row with its count and outcomes, not as a second webhook.
   */
  webhooks: WebhookDeliveries[];
}

export interface WebhookDeliveries {
  webhookId: string;
  /** Deliveries of this event to this webhook (more than one after a resend). */
  deliveries: number;
  /** How many of them ended (or stand) in each state, in the order first seen. */
  states: Record<string, number>;
  /** Attempts across those deliveries. */
  attempts: number;
}

function byWebhook(deliveries: readonly Omit<EmulatedDelivery, 'envelope'>[]): WebhookDeliveries[] {
  const groups = new Map<string, WebhookDeliveries>();
  for (const d of deliveries) {
    const group = groups.get(d.webhookId) ?? {
      webhookId: d.webhookId,
      deliveries: 0,
      states: {},
      attempts: 0,
    };
    group.deliveries++;
    group.states[d.state] = (group.states[d.state] ?? 0) + 1;
    group.attempts += d.attempts;
    groups.set(d.webhookId, group);
  }
  return [...groups.values()];
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

/** One event with its deliveries and attempts. */
export function eventView(emulator: Emulator, event: DeliveryEnvelope): EventView {
  const deliveries = emulator.deliveries
    .filter((d) => d.eventId === event.id)
    .map(({ envelope: _e, ...delivery }) => delivery);
  return {
    event,
    deliveries,
    attempts: emulator.attempts.filter((a) => a.eventId === event.id),
    webhooks: byWebhook(deliveries),
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
