import { deadLetterReason } from '../inbox/worker/read-queued-event';
import type { DeadLetter } from '../inbox/inbox';
import type { IssueRef } from '../inbox/inbox-issue';
import {
  handlerStatesOf,
  isQueuedDelivery,
  type HandlerStates,
  type QueuedDelivery,
} from '../inbox/queued-delivery';

/** A dead letter as the `<name>.dead` queue holds it. */
export interface DeadLetterData {
  delivery: QueuedDelivery;
  attempts: number;
  lastError: string | null;
  /** ISO 8601. */
  failedAt: string;
  /**
   * The issues it belongs to, worked out when it was dead-lettered, so PostgreSQL groups them
   * (`inbox.issues()`) without reading them out. Absent on letters written before issues existed.
   */
  issues?: IssueRef[];
  /** Each handler's state when the job died (absent in a dead letter of an older version). */
  handlers?: HandlerStates;
  /** Set on the dead letter by a replay naming handlers, just before it is moved back. */
  runOnly?: readonly string[];
}

export function isDeadLetterData(value: unknown): value is DeadLetterData {
  return (
    typeof value === 'object' &&
    value !== null &&
    isQueuedDelivery((value as { delivery?: unknown }).delivery) &&
    typeof (value as { failedAt?: unknown }).failedAt === 'string'
  );
}

export function deadLetterFromData(data: DeadLetterData): DeadLetter {
  const handlers = handlerStatesOf(data.handlers);
  return {
    ...(handlers === undefined ? {} : { handlers }),
    delivery: data.delivery,
    attempts: data.attempts,
    lastError: data.lastError,
    receivedAt: new Date(data.delivery.receivedAt),
    failedAt: new Date(data.failedAt),
    ...deadLetterReason(data.delivery, data.lastError),
  };
}
