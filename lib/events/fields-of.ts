import type { EventType } from './catalogue';
import { dataFieldsOf, layoutBFieldsOf } from './family-fields';
import type { Layout } from './webhook-event';

/** The data fields of `type` in `layout`. */
export function fieldsOf(type: EventType, layout: Layout): readonly string[] {
  return layout === 'A' ? dataFieldsOf(type) : layoutBFieldsOf(type);
}
