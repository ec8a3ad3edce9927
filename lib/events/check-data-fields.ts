import type { EventType } from './catalogue';
import { fieldsOf } from './fields-of';
import { unknownFieldReason } from './unknown-field-reason';
import { unknownNestedField } from './unknown-nested-field';
import type { Layout } from './webhook-event';

/**
 * The run-time twin of the overrides' types, for JavaScript callers: a field the type's family does
 * not carry in `layout` (a misspelling, the other layout's name, another family's field) would be sent
 * as an extra the receiver ignores, and the test would pass for the wrong reason. So would one inside
 * `details`, a device or layout B's `device` (the spec names their fields too). Values are the
 * receiver's to check; `metadata` holds anything.
 */
export function checkDataFields(type: EventType, layout: Layout, data: unknown, where: string): void {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new TypeError(`[service-webhooks] ${where}: data must be an object of field overrides`);
  }
  const known = fieldsOf(type, layout);
  for (const [field, value] of Object.entries(data)) {
    const reason = known.includes(field)
      ? unknownNestedField(type, layout, field, value)
      : unknownFieldReason(type, layout, field);
    if (reason === undefined) continue;
    throw new TypeError(
      `[service-webhooks] ${where}: ${reason}. To send a field the spec does not define, use buildUnknownEvent.`,
    );
  }
}
