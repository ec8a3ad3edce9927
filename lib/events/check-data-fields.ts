import { didYouMean } from '../did-you-mean';
import { EVENT_TYPES, familyOf, type EventType } from './catalogue';
import { CREDENTIAL_FIELDS } from './data-schemas';
import { dataFieldsOf, layoutBFieldsOf } from './family-fields';
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

/** The data fields of `type` in `layout`. */
export function fieldsOf(type: EventType, layout: Layout): readonly string[] {
  return layout === 'A' ? dataFieldsOf(type) : layoutBFieldsOf(type);
}

/** Each layout's names for what the other layout calls `key` (spec 2.4 and 9: the one mapping between them). */
const OTHER_NAMES: Readonly<Record<Layout, Readonly<Record<string, readonly string[]>>>> = {
  // Layout B names given in layout A.
  A: {
    access_pass_id: ['id'],
    device: ['devices'],
    card_number: ['details.card_number'],
    site_code: ['details.site_code'],
    file_data: ['details.file_data'],
  },
  // Layout A names given in layout B.
  B: { id: ['access_pass_id'], devices: ['device'], details: ['card_number', 'site_code', 'file_data'] },
};

/** Who carries `field` in `layout`: whole families by name, otherwise the types. */
function carriers(field: string, layout: Layout): string | undefined {
  const names: string[] = [];
  const byFamily = new Map<string, EventType[]>();
  for (const type of EVENT_TYPES) {
    const family = familyOf(type) as string;
    byFamily.set(family, [...(byFamily.get(family) ?? []), type]);
  }
  for (const [family, types] of byFamily) {
    const carrying = types.filter((type) => fieldsOf(type, layout).includes(field));
    const others = types.filter((type) => !carrying.includes(type));
    if (others.length === 0) names.push(`${family} events`);
    else if (others.length < carrying.length) names.push(`${family} events except ${others.join(', ')}`);
    else names.push(...carrying);
  }
  return names.length === 0 ? undefined : names.join(', ');
}

/**
 * Why `field` is not a data field of `type` in `layout`, with the name meant when there is one:
 * the layout's own name for a field of the other layout, a misspelling, or a field of another family.
 * `prefix` goes before a suggested name (`'data.'` on the command line).
 */
export function unknownFieldReason(type: EventType, layout: Layout, field: string, prefix = ''): string {
  const own = fieldsOf(type, layout);
  const head = `${type} in layout ${layout} has no field "${field}"`;
  // Own keys only: a `__proto__` or `constructor` field must not reach the object's prototype.
  const other = Object.hasOwn(OTHER_NAMES[layout], field) ? OTHER_NAMES[layout][field] : undefined;
  const names = (other ?? []).filter((name) => own.includes(name.split('.')[0] as string));
  if (names.length > 0) {
    return `${head}; layout ${layout} calls it ${names.map((name) => `"${prefix}${name}"`).join(', ')}`;
  }
  const hint = didYouMean(field, own);
  if (hint !== undefined) return `${head}; did you mean "${prefix}${hint}"?`;
  if (layout === 'A' && (field === 'details' || field === 'devices') && familyOf(type) === 'access_pass')
    return `${head}: spec 6 rule 2 puts details on ag.access_pass.issued only, devices on every other access pass event`;
  if (layout === 'B' && dataFieldsOf(type).includes(field))
    return `${head}: layout B (spec 2.4) does not carry it; in layout B this event carries ${own.map((name) => `${prefix}${name}`).join(', ')}`;
  const who = carriers(field, layout);
  return who === undefined ? head : `${head}: layout ${layout} gives it to ${who}`;
}

/**
 * The data fields whose objects (or arrays of objects) have fields the spec names (2.3, 2.4). Those it
 * does not name hold anything: `metadata` is the customer's, a `card_templates` item is "not shown".
 */
const NESTED: Readonly<Record<Layout, Readonly<Record<string, readonly string[]>>>> = {
  A: { details: CREDENTIAL_FIELDS, devices: [...CREDENTIAL_FIELDS, 'type'] },
  B: { device: ['type', 'id'] },
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Why a field inside data's `field` (given as `value`) is not one the spec names, for the first such
 * field, with the name meant when there is one; undefined when every field is known. A value of the
 * wrong kind is left to the receiver's schema. With `prefix` `'data.'` (the command line) paths are
 * written as `--set` takes them (`data.devices.0.id`), else as in code (`devices[0].id`).
 */
export function unknownNestedField(
  type: EventType,
  layout: Layout,
  field: string,
  value: unknown,
  prefix = '',
): string | undefined {
  if (!Object.hasOwn(NESTED[layout], field)) return undefined;
  const known = NESTED[layout][field] as readonly string[];
  const at = (i: number) => (prefix === '' ? `${field}[${i}]` : `${field}.${i}`);
  const items: [string, unknown][] = Array.isArray(value)
    ? value.map((item, i) => [at(i), item])
    : [[field, value]];
  for (const [path, item] of items) {
    if (!isRecord(item)) continue;
    const key = Object.keys(item).find((name) => !known.includes(name));
    if (key === undefined) continue;
    const head = `${type} in layout ${layout} has no field "${path}.${key}"`;
    if (field === 'details' && key === 'type') return `${head}: spec 2.3 gives devices a type, details none`;
    const hint = didYouMean(key, known);
    if (hint !== undefined) return `${head}; did you mean "${prefix}${path}.${hint}"?`;
    return `${head}: spec ${layout === 'A' ? '2.3' : '2.4'} names ${known.join(', ')}`;
  }
  return undefined;
}
