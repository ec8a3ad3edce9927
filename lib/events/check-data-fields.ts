import type { EventType } from './catalogue';
import { fieldsOf } from './family-fields';
import { unknownFieldReason } from './unknown-field-reason';
import type { Layout } from './webhook-event';

/**
 * The run-time twin of the overrides' types, for JavaScript callers: a field the type's family does
 * not carry in `layout` (a misspelling, the other layout's name, another family's field) would be sent
 * as an extra the receiver ignores, and the test would pass for the wrong reason. Values are the
 * receiver's to check; `metadata` holds anything.
 */
export function checkDataFields(type: EventType, layout: Layout, data: unknown, where: string): void {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new TypeError(`[service-webhooks] ${where}: data must be an object of field overrides`);
  }
  const known = fieldsOf(type, layout);
  for (const field of Object.keys(data)) {
    if (known.includes(field)) continue;
    throw new TypeError(
      `[service-webhooks] ${where}: ${unknownFieldReason(type, layout, field)}. To send a field the spec does not define, use buildUnknownEvent.`,
    );
  }
}
