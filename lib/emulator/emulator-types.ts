import type { EventType } from '../events/catalogue';
import type { DeliveryEnvelope } from '../testing/build-event';

export type AuthMethod = 'bearer_token' | 'mtls';

/** A registered webhook, as the emulator holds it. */
export interface EmulatedWebhook {
  id: string;
  name: string;
  url: string;
  authMethod: AuthMethod;
  subscribedEvents: EventType[];
  verified: boolean;
  /** The webhook's secret (`private_key`), sent as the bearer token on every delivery. */
  privateKey: string;
  createdAt: string;
}

export interface RegisterWebhookInput {
  name: string;
  url: string;
  /** Defaults to `'bearer_token'`. With `'mtls'` deliveries carry no token (the emulator has no TLS). */
  authMethod?: AuthMethod;
  subscribedEvents: readonly EventType[];
}

/** One HTTP attempt to deliver an event to a webhook. */
export interface AttemptRecord {
  eventId: string;
  type: string;
  webhookId: string;
  attempt: number;
  /** The status answered, or null when the attempt failed before an answer. */
  status: number | null;
  /** Why it failed without an answer: a timeout, a refused connection, … */
  error: string | null;
  at: string;
  durationMs: number;
  /** What the emulator did next. */
  outcome: 'acknowledged' | 'retrying' | 'dropped';
}

export type DeliveryState = 'pending' | 'acknowledged' | 'dropped';

/** One event on its way to one webhook, across all its attempts. */
export interface DeliveryRecord {
  eventId: string;
  type: string;
  webhookId: string;
  state: DeliveryState;
  attempts: number;
  envelope: DeliveryEnvelope;
}

export interface EmitResult {
  event: DeliveryEnvelope;
  /** The deliveries started: one per verified webhook subscribed to the type. */
  deliveries: DeliveryRecord[];
}
