import type { EventType } from '../events/catalogue';
import type { DeliveryEnvelope } from '../testing/build-event';

export type AuthMethod = 'bearer_token' | 'mtls';

/** What the last handshake to a webhook's URL got back. */
export interface HandshakeRecord {
  at: string;
  /** Whether the answer was 200 and echoed the challenge. */
  verified: boolean;
  /** The status answered, or null when there was no answer. */
  status: number | null;
  /** Why it failed, in words: a timeout, a refused connection, a wrong echo, the problem `detail`. */
  reason: string | null;
}

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
  /** Null until the first handshake has been answered or has failed. */
  lastHandshake: HandshakeRecord | null;
}

export interface RegisterWebhookInput {
  name: string;
  url: string;
  /**
   * Defaults to `'bearer_token'`. With `'mtls'` the handshake and deliveries carry no token and, to an
   * `https://` URL, present `emulator.clientCertificate`.
   */
  authMethod?: AuthMethod;
  subscribedEvents: readonly EventType[];
  /**
   * The delivery token, chosen up front so a local app can be configured before it registers (the
   * real Service always generates it). 16 to 512 token characters (`A-Z a-z 0-9 - . _ ~ + / =`).
   * Defaults to a random `whsk_…`.
   */
  privateKey?: string;
}

/** One HTTP attempt to deliver an event to a webhook. */
export interface AttemptRecord {
  eventId: string;
  type: string;
  webhookId: string;
  /** Where the attempt went. */
  url: string;
  attempt: number;
  /** The status answered, or null when the attempt failed before an answer. */
  status: number | null;
  /** Why it failed without an answer: a timeout, a refused connection, … */
  error: string | null;
  at: string;
  durationMs: number;
  /** What the emulator did next. */
  outcome: 'acknowledged' | 'retrying' | 'dropped';
  /** The request headers sent, the token masked. */
  requestHeaders: Record<string, string>;
  /** The receiver's answer headers, and its body (the first 8 KiB). */
  responseHeaders: Record<string, string>;
  responseBody: string | null;
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

/** What changed, as the emulator tells its listeners (the web console, the CLI). */
export type EmulatorChange =
  | { kind: 'webhook'; webhook: Omit<EmulatedWebhook, 'privateKey'> }
  | { kind: 'webhook-deleted'; id: string }
  | { kind: 'event'; event: DeliveryEnvelope; webhookIds: string[] }
  | { kind: 'sending'; eventId: string; type: string; webhookId: string; url: string; attempt: number }
  | { kind: 'attempt'; attempt: AttemptRecord }
  | { kind: 'delivery'; delivery: Omit<DeliveryRecord, 'envelope'> };
