import { LAYOUT_A_FIELDS, LAYOUT_B_FIELDS } from './data-schemas';
import { InvalidEventError } from './invalid-event-error';
import type { Layout } from './webhook-event';

const SERVICE_ORIGIN = /^\/service\/[^/]+/;

interface Evidence {
  layout: Layout;
  reason: string;
}

/**
 * The one place the layout is decided, by presence (spec 9), never by trying one and then the other:
 * - layout A: `dataschema` is set, or `source` is `/service/<origin>`, or data has `details`/`devices`;
 * - layout B: `source` is the constant `service`, or data has `access_pass_id`, `device`, or a top-level
 *   `card_number`/`site_code`/`file_data`.
 * Signs of both → an InvalidEventError (400). No sign of either → A, the current layout.
 */
export function detectLayout(
  envelope: { source: string; dataschema?: string | null | undefined },
  data: Readonly<Record<string, unknown>>,
): Layout {
  const evidence: Evidence[] = [];
  if (envelope.dataschema != null) evidence.push({ layout: 'A', reason: 'dataschema is set' });
  if (SERVICE_ORIGIN.test(envelope.source))
    evidence.push({ layout: 'A', reason: `source is "${envelope.source}"` });
  if (envelope.source === 'service') evidence.push({ layout: 'B', reason: 'source is "service"' });
  for (const field of LAYOUT_A_FIELDS) {
    if (Object.hasOwn(data, field)) evidence.push({ layout: 'A', reason: `data.${field} is present` });
  }
  for (const field of LAYOUT_B_FIELDS) {
    if (Object.hasOwn(data, field)) evidence.push({ layout: 'B', reason: `data.${field} is present` });
  }
  const a = evidence.find((e) => e.layout === 'A');
  const b = evidence.find((e) => e.layout === 'B');
  if (a && b) {
    throw new InvalidEventError({
      slug: 'mixed-layout',
      detail: `The event contradicts itself: ${a.reason} (layout A) but ${b.reason} (layout B).`,
      field: b.reason.startsWith('data.') ? b.reason.split(' ')[0] : 'source',
    });
  }
  return b ? 'B' : 'A';
}
