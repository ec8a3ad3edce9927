import type { EventType } from '../events/catalogue';
import type { DeliveryEnvelope } from '../events/build-event';

import type { AuthMethod } from '../console/console-wire';

/** What the last handshake to a webhook's URL got back. */
export interface HandshakeRecord {
  /** When it was sent, an ISO 8601 timestamp. */
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
  /** Its id: `wh_…`. */
  id: string;
  /** The name it was registered with. */
  name: string;
  /** Where handshakes and deliveries go. */
  url: string;
  /** How deliveries authenticate. */
  authMethod: AuthMethod;
  /** The event types delivered to it. */
  subscribedEvents: EventType[];
  /** Whether its last handshake was echoed: only verified webhooks get deliveries. */
  verified: boolean;
  /** The webhook's secret (`private_key`), sent as the bearer token on every delivery. */
  privateKey: string;
  /** When it was registered, an ISO 8601 timestamp. */
  createdAt: string;
  /** Null until the first handshake has been answered or has failed. */
  lastHandshake: HandshakeRecord | null;
}

/** What `registerWebhook` registers. */
export interface RegisterWebhookInput {
  /** A name of your choice. */
  name: string;
  /** Where handshakes and deliveries go: `http:` or `https:`. */
  url: string;
  /**
   * Defaults to `'bearer_token'`. With `'mtls'` the handshake and deliveries carry no token and, to an
   * `https://` URL, present `emulator.clientCertificate`.
   */
  authMethod?: AuthMethod;
  /** The event types to deliver, each from the catalogue. */
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
  /** The event's id. */
  eventId: string;
  /** The event's type. */
  type: string;
  /** The webhook it went to. */
  webhookId: string;
  /** Where the attempt went. */
  url: string;
  /** Which attempt of this delivery it was, from 1. */
  attempt: number;
  /** The status answered, or null when the attempt failed before an answer. */
  status: number | null;
  /** Why it failed without an answer: a timeout, a refused connection, … */
  error: string | null;
  /** When it was sent, an ISO 8601 timestamp. */
  at: string;
  /** How long until the answer or the failure, in milliseconds. */
  durationMs: number;
  /** What the emulator did next. */
  outcome: 'acknowledged' | 'retrying' | 'dropped';
  /** The request headers sent, the token masked. */
  requestHeaders: Record<string, string>;
  /** The receiver's answer headers, and its body (the first 8 KiB). */
  responseHeaders: Record<string, string>;
  /** The receiver's answer body (the first 8 KiB), or null when there was no answer. */
  responseBody: string | null;
}

/** Where a delivery is: still being attempted, acknowledged (200 or 201), or given up after the retry window. */
export type DeliveryState = 'pending' | 'acknowledged' | 'dropped';

/** One event on its way to one webhook, across all its attempts. */
export interface EmulatedDelivery {
  /** The event's id. */
  eventId: string;
  /** The event's type. */
  type: string;
  /** The webhook it goes to. */
  webhookId: string;
  /** Where it is. */
  state: DeliveryState;
  /** How many attempts were made so far. */
  attempts: number;
  /** The event as delivered. */
  envelope: DeliveryEnvelope;
}

/** What `emit` and `deliver` started. */
export interface EmitResult {
  /** The event as delivered. */
  event: DeliveryEnvelope;
  /** The deliveries started: one per verified webhook subscribed to the type. */
  deliveries: EmulatedDelivery[];
}

/** What changed, as the emulator tells its listeners (the web console, the CLI). */
export type EmulatorChange =
  | {
      /** A webhook was registered or changed (its handshake included). */
      kind: 'webhook';
      /** The webhook now, without its token. */
      webhook: Omit<EmulatedWebhook, 'privateKey'>;
    }
  | {
      /** A webhook was deleted. */
      kind: 'webhook-deleted';
      /** Its id. */
      id: string;
    }
  | {
      /** An event was emitted or delivered again. */
      kind: 'event';
      /** The event. */
      event: DeliveryEnvelope;
      /** The webhooks it goes to. */
      webhookIds: string[];
    }
  | {
      /** An attempt is being sent. */
      kind: 'sending';
      /** The event's id. */
      eventId: string;
      /** The event's type. */
      type: string;
      /** The webhook it goes to. */
      webhookId: string;
      /** The webhook's URL. */
      url: string;
      /** Which attempt it is, from 1. */
      attempt: number;
    }
  | {
      /** An attempt got its answer, or failed. */
      kind: 'attempt';
      /** The attempt. */
      attempt: AttemptRecord;
    }
  | {
      /** A delivery changed state. */
      kind: 'delivery';
      /** The delivery, without its envelope. */
      delivery: Omit<EmulatedDelivery, 'envelope'>;
    };

/** What one POST to a receiver got back, over fetch or node:https. */
export interface OutboundResult {
  status: number | null;
  error: string | null;
  /** The answer parsed as JSON, else its text. */
  body: unknown;
  /** The answer's text, cut at 8 KiB. */
  text: string | null;
  headers: Record<string, string>;
}
