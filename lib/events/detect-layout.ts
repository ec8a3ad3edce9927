import { LAYOUT_A_FIELDS, LAYOUT_B_FIELDS } from './data-schemas';
import { InvalidEventError } from './invalid-event-error';
import type { Layout } from './webhook-event';

const SERVICE_ORIGIN = /^\/service\/[^/]+/;

type Envelope = { source: string; dataschema?: string | null | undefined };

/** The first sign of layout A, said for an error message; undefined when there is none. */
function signOfA(envelope: Envelope, data: Readonly<Record<string, unknown>>): string | undefined {
  if (envelope.dataschema != null) return 'dataschema is set';
  if (SERVICE_ORIGIN.test(envelope.source)) return `source is "${envelope.source}"`;
  for (const field of LAYOUT_A_FIELDS) if (Object.hasOwn(data, field)) return `data.${field} is present`;
  return undefined;
}

/** The first sign of layout B, said for an error message; undefined when there is none. */
function signOfB(envelope: Envelope, data: Readonly<Record<string, unknown>>): string | undefined {
  if (envelope.source === 'service') return 'source is "service"';
  for (const field of LAYOUT_B_FIELDS) if (Object.hasOwn(data, field)) return `data.${field} is present`;
  return undefined;
}

/**
 * The one place the layout is decided, by presence (spec 9), never by trying one and then the other:
 * - layout A: `dataschema` is set, or `source` is `/service/<origin>`, or data has `details`/`devices`;
 * - layout B: `source` is the constant `service`, or data has `access_pass_id`, `device`, or a top-level
 *   `card_number`/`site_code`/`file_data`.
 * Signs of both → an InvalidEventError (400). No sign of either → A, the current layout.
 */
export function detectLayout(envelope: Envelope, data: Readonly<Record<string, unknown>>): Layout {
  // Layout A's signs are looked for only when B shows one: most events show none of B, and are A.
  const b = signOfB(envelope, data);
  if (b === undefined) return 'A';
  const a = signOfA(envelope, data);
  if (a === undefined) return 'B';
  throw new InvalidEventError({
    slug: 'mixed-layout',
    detail: `The event contradicts itself: ${a} (layout A) but ${b} (layout B).`,
    field: b.startsWith('data.') ? b.split(' ')[0] : 'source',
  });
}
