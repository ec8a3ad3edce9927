import { deadLetterReason } from '../core/dispatch/dead-letter-reason';
import type { DeadLetter } from '../inbox/inbox';
import { isQueuedDelivery, type QueuedDelivery } from '../inbox/queued-delivery';

/** A dead letter as the `<name>.dead` queue holds it. */
export interface DeadLetterData {
  delivery: QueuedDelivery;
  attempts: number;
  lastError: string | null;
  /** ISO 8601. */
  failedAt: string;
}

export function isDeadLetterData(value: unknown): value is DeadLetterData {
  return (
    typeof value === 'object' &&
    value !== null &&
    isQueuedDelivery((value as { delivery?: unknown }).delivery) &&
    typeof (value as { failedAt?: unknown }).failedAt === 'string'
  );
}

export function deadLetterOf(data: DeadLetterData): DeadLetter {
  return {
    delivery: data.delivery,
    attempts: data.attempts,
    lastError: data.lastError,
    receivedAt: new Date(data.delivery.receivedAt),
    failedAt: new Date(data.failedAt),
    ...deadLetterReason(data.delivery, data.lastError),
  };
}
