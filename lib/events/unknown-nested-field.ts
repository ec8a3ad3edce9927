import { didYouMean } from '../did-you-mean';
import type { EventType } from './catalogue';
import type { Layout } from './webhook-event';
import { CREDENTIAL_FIELDS } from './data-schemas';

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
