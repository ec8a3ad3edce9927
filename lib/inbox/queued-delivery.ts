import type { AnyWebhookEvent } from '../events/webhook-event';
import { nodeCrypto } from '../lazy-crypto';
import { jsonText } from './json-text';

/** The request headers a queued delivery keeps for `ctx.header` in the worker: never credentials. */
export const KEPT_HEADERS = [
  'user-agent',
  'content-type',
  'traceparent',
  'tracestate',
  'x-service-webhook-attempt',
] as const;

/**
 * One delivery as the queue holds it: enough to run the handlers later exactly as the receiver
 * would have, and nothing secret.
 */
export interface QueuedDelivery {
  /** The idempotency key (scope, source, id): the queue's job id is derived from it. */
  key: string;
  /** The CloudEvent `id`. */
  id: string;
  /** The event type, as sent. */
  type: string;
  /** The CloudEvent `source`. */
  source: string;
  /** The event's RFC 3339 `time` as sent, or null when it had none. */
  time: string | null;
  /**
   * The CloudEvents envelope as received (`event.raw`), as JSON text: `JSON.parse` it to read it.
   * Text, not an object, so an open data field nested at any depth the receiver accepts is queued:
   * the queues serialize an object recursively (BullMQ, the PostgreSQL driver) or cap its depth
   * (PostgreSQL's jsonb), and would refuse that event on every redelivery.
   */
  envelope: string;
  /** The kept request headers, by lowercase name. */
  headers: Record<string, string>;
  /** The delivery span's W3C traceparent (else the request's), so the job's span links to it. */
  traceparent: string | null;
  /** ISO 8601, when the receiver queued it. */
  receivedAt: string;
  /**
   * Set on an event a strict receiver quarantined (`quarantine: true`) for breaking spec rules 2–5:
   * the worker holds it to them again, so a replay runs it only once the code deployed accepts it.
   */
  checkRules?: true;
}

/** The delivery of `event` as the queue will hold it. */
export function queuedDelivery(
  key: string,
  event: Pick<AnyWebhookEvent, 'id' | 'type' | 'source' | 'time' | 'raw'>,
  header: (name: string) => string | undefined,
  traceparent: string | null,
): QueuedDelivery {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = header(name);
    if (value !== undefined) headers[name] = value;
  }
  return {
    key,
    id: event.id,
    type: event.type,
    source: event.source,
    time: event.time,
    envelope: jsonText(event.raw),
    headers,
    traceparent: traceparent ?? headers.traceparent ?? null,
    receivedAt: new Date().toISOString(),
  };
}

/**
 * The job id of a key, shaped as a UUID (pg-boss ids are UUIDs; BullMQ ids may not hold `:`), from
 * its SHA-256: the same key is the same job on every receiver, so a redelivery never enqueues twice.
 */
export function jobIdFor(key: string): string {
  const crypto = nodeCrypto();
  // The one-shot hash (Node ≥ 21.7) is half the CPU of a Hash object; other runtimes may lack it.
  const hex =
    typeof crypto.hash === 'function'
      ? crypto.hash('sha256', key, 'hex')
      : crypto.createHash('sha256').update(key, 'utf8').digest('hex');
  // Version 8 (custom) and the RFC 9562 variant, so PostgreSQL's uuid type takes it as is.
  const v = `8${hex.slice(13, 16)}`;
  const variant = ((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16) + hex.slice(17, 20);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${v}-${variant}-${hex.slice(20, 32)}`;
}

/** Whether a job's data is a queued delivery (a queue can hold anything someone put there). */
export function isQueuedDelivery(value: unknown): value is QueuedDelivery {
  if (typeof value !== 'object' || value === null) return false;
  const d = value as Record<string, unknown>;
  return (
    typeof d.key === 'string' &&
    typeof d.id === 'string' &&
    typeof d.type === 'string' &&
    typeof d.envelope === 'string'
  );
}
