import { didYouMean } from '../did-you-mean';
import { EVENT_TYPES, familyOf, type EventType } from './catalogue';
import { dataFieldsOf } from './family-fields';
import { fieldsOf } from './fields-of';
import type { Layout } from './webhook-event';

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
