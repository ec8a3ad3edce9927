import { InvalidEventError } from '../../events/invalid-event-error';
import type { DeadLetter } from '../inbox';
import type { QueuedDelivery } from '../queued-delivery';
import { readQueuedEvent } from './read-queued-event';

/** How the worker writes the error of a try that could not read its event (`errorMessage`). */
const UNREADABLE = 'InvalidEventError: ';

/**
 * Why a dead letter is one: `invalid` when its last try could not read the event (a quarantined
 * event, or one the code deployed then no longer reads), else `failed`. An invalid one is read again
 * with the code deployed now, so `problem` says what is still wrong, and is absent once this code
 * reads it: then a replay runs it.
 */
export function deadLetterReason(
  delivery: QueuedDelivery,
  lastError: string | null,
): Pick<DeadLetter, 'reason' | 'problem'> {
  if (lastError?.startsWith(UNREADABLE) !== true) return { reason: 'failed' };
  try {
    readQueuedEvent(delivery);
    return { reason: 'invalid' };
  } catch (error) {
    if (!(error instanceof InvalidEventError)) return { reason: 'invalid' };
    const first = error.errors?.[0];
    return {
      reason: 'invalid',
      problem: { field: first?.field ?? error.field ?? '(body)', expected: first?.rule ?? error.message },
    };
  }
}
