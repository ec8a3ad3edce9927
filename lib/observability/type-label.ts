import { isEventType } from '../events/catalogue';

/**
 * An event type as a metric label or span name. The sender chooses the type string, so only the
 * catalogue's types are used as they are: anything else is `other` (and a request refused before its
 * event was read is `none`), which keeps the number of series and span names bounded.
 */
export function typeLabel(type: string | null): string {
  if (type === null) return 'none';
  return isEventType(type) ? type : 'other';
}
