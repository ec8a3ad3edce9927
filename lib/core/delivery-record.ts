import type { Layout } from '../events/webhook-event';

/** How a request to the receiver ended, from the Service's point of view. */
export type DeliveryOutcome =
  | 'handshake'
  | 'processed'
  | 'queued'
  | 'unhandled'
  | 'duplicate'
  | 'conflict'
  | 'failed'
  | 'timeout'
  | 'rejected'
  | 'store-unavailable';

/**
 * One per request that reaches the receiver, whatever the adapter. Fields unknown at the stage the
 * request ended are null: a 401 has no event id.
 */
export interface DeliveryRecord {
  eventId: string | null;
  type: string | null;
  source: string | null;
  layout: Layout | null;
  outcome: DeliveryOutcome;
  /** The HTTP status answered. */
  status: number;
  /** The problem slug when the answer was a problem (`invalid-token`, `payload-too-large`, …), else null. */
  problem: string | null;
  /** From the request entering the receiver to its answer being ready. */
  durationMs: number;
  /** How long the handlers ran before the answer (null when none ran). */
  handlerMs: number | null;
  /** The delivery attempt number when the sender says it (`x-service-webhook-attempt`), else null. */
  attempt: number | null;
}

/**
 * What `onDelivery` takes: a function of the record. It may also carry `onRequestStart`, called as
 * each request enters the receiver (before anything is read), so a listener can count the requests in
 * flight; every request announced so gets exactly one record. Both are read once, at construction.
 */
export type DeliveryListener = ((record: DeliveryRecord) => unknown) & {
  onRequestStart?: () => unknown;
  /**
   * Called for what the idempotency store's bookkeeping did after an answer: a failed markDone that
   * a background retry recovered (`mark-done-recovered`) or gave up on (`mark-done-failed`), and a
   * success that found its lease taken over (`lease-lost`).
   */
  onBookkeeping?: (event: BookkeepingEvent) => unknown;
};

/** What {@link DeliveryListener.onBookkeeping} is told. */
export type BookkeepingEvent = 'mark-done-recovered' | 'mark-done-failed' | 'lease-lost';

/** A record as it starts: nothing read yet, `rejected` until a later stage says otherwise. */
export function newDeliveryRecord(attemptHeader: string | undefined): DeliveryRecord {
  const attempt = attemptHeader === undefined ? NaN : Number(attemptHeader);
  return {
    eventId: null,
    type: null,
    source: null,
    layout: null,
    outcome: 'rejected',
    status: 0,
    problem: null,
    durationMs: 0,
    handlerMs: null,
    attempt: Number.isSafeInteger(attempt) && attempt > 0 ? attempt : null,
  };
}
