import type { EntityPosition } from '../idempotency/entity-ordering-store';
import { storedKey } from './stored-key';

/**
 * A position as a shared store writes and compares it: the time's fixed-width digits, then the event
 * id in its stored form (a long or odd id becomes its hash, which still tells ids apart, so ties stay
 * broken the same way whichever delivery arrives first).
 */
export function storedPosition(position: EntityPosition): string {
  return `${position.time}|${storedKey(position.eventId)}`;
}
