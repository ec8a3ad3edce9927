import type { BookkeepingEvent } from '../idempotency/bookkeeping-event';
import type { Layout } from '../events/webhook-event';

/** How a request to the receiver ended, from the Service's point of view. */
export type DeliveryOutcome =
  | 'handshake'
  | 'processed'
  | 'queued'
  /** Data this code cannot read, kept in the inbox's dead letters (`quarantine: true`) and acknowledged. */
  | 'quarantined'
  | 'unhandled'
  | 'duplicate'
  /** Older than its entity's newest processed event: acknowledged without running its ordered handlers. */
  | 'stale'
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
  /** null;|The CloudEvent `id`; null when the request was refused before its event was read (a 401, a 413, a broken envelope). */
  eventId: string | null;
  /** null;|The event type as sent; null likewise. */
  type: string | null;
  /** null;|The CloudEvent `source`; null likewise. */
  source: string | null;
  /** null;|`'A'` or `'B'`; null likewise. */
  layout: Layout | null;
  /** How the request ended: processed, duplicate, refused, failed, … */
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
  /**
   * Set only when handlers with `{ ordering: 'newest-wins' }` matched an event with an entity and a
   * `time`: `'newest'` when they ran, `'stale'` when they were skipped as older than the entity's
   * newest processed event (with outcome `stale` when no other handler ran, else `processed`).
   */
  ordering?: 'newest' | 'stale';
  /**
   * Set only when the receiver shed the delivery (503, unread) to stay within a bound: `in-flight`
   * (`maxInFlight`) or `queue-depth` (the inbox's `maxDepth`).
   */
  shed?: ShedReason;
  /**
   * Set once the event's handlers were decided (they ran, or were skipped as done or stale): each
   * matching handler by name, with how it fared. Absent when none was (refused, duplicate, queued,
   * conflict, store unavailable).
   */
  handlers?: readonly HandlerRun[];
}

/**
 * How one handler of an event fared in a delivery: `ok` it ran and succeeded; `failed` it ran and
 * threw; `timeout` it was still running when the delivery was answered 503 (it goes on, and decides
 * the event's outcome); `skipped-done` it succeeded in an earlier delivery and did not run;
 * `skipped-stale` it is ordered and the event is older than its entity's newest processed one.
 */
export type HandlerRunOutcome = 'ok' | 'failed' | 'timeout' | 'skipped-done' | 'skipped-stale';

/** One handler of a delivery's event, in {@link DeliveryRecord.handlers}. */
export interface HandlerRun {
  /** The handler's name, as `ctx.handler` gives it. */
  handler: string;
  /** How it fared. */
  outcome: HandlerRunOutcome;
  /** Its `ctx.attempt` when it ran; null when it did not. */
  attempt: number | null;
  /** How long it ran (until the answer, for `timeout`); null when it did not. */
  durationMs: number | null;
}

/** Why a delivery was shed. */
export type ShedReason = 'in-flight' | 'queue-depth';

/**
 * What `onDelivery` takes: a function of the record. It may also carry `onRequestStart`, called as
 * each request enters the receiver (before anything is read), so a listener can count the requests in
 * flight; every request announced so gets exactly one record. Both are read once, at construction.
 */
export type DeliveryListener = ((record: DeliveryRecord) => unknown) & {
  /** Called as each request enters the receiver, before anything is read; every request announced gets exactly one record. */
  onRequestStart?: () => unknown;
  /**
   * Called for what the idempotency store's bookkeeping did after an answer: a failed markDone that
   * a background retry recovered (`mark-done-recovered`) or gave up on (`mark-done-failed`); each
   * success whose record the store refused because its lease had run out or been taken over
   * (`lease-lost`, once per refused record: an event's markDone, or one handler's success when the
   * event has several; the log says it once a minute, this every time); and an event of an ordered
   * entity whose `time` lay past its receipt plus `maxFutureSkewMs`, so the entity's mark was held at
   * that bound (`future-time`).
   */
  onBookkeeping?: (event: BookkeepingEvent) => unknown;
  /**
   * Called once a delivery is authenticated and its envelope read, with the envelope as received and
   * the record the same request reports later (the same object), so a recorder can pair them:
   * `recordDeliveries` from `service-webhooks/testing` writes both to a scenario file.
   */
  onEvent?: (envelope: Readonly<Record<string, unknown>>, record: DeliveryRecord) => unknown;
};

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
