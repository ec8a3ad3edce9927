import type { EventType } from '../events/catalogue';
import { fieldsOf, unknownFieldReason, unknownNestedField } from '../events/check-data-fields';
import type { Layout } from '../events/webhook-event';
import { defaultLayoutAData, toLayoutBData } from '../events/default-data';
import { UsageError } from './cli-errors';

const ENVELOPE_NAMES = ['id'];

/** `"Ada"` stays a string; `42`, `true`, `null`, `{"a":1}` are read as JSON. */
function value(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Turns `--set data.full_name=Ada --set data.metadata.team=red --set id=evt_1` into the test kit's data
 * overrides (in the layout's own names, nested fields merged into the defaults) and an event id.
 */
export function parseSets(
  type: EventType,
  layout: Layout,
  sets: readonly string[],
): { data: Record<string, unknown>; id?: string } {
  // The type's own fields in the layout (spec 2.2, 2.4), as the test kit takes them.
  const names = fieldsOf(type, layout);
  const defaults = layout === 'A' ? defaultLayoutAData(type) : toLayoutBData(type, defaultLayoutAData(type));
  const data: Record<string, unknown> = {};
  let id: string | undefined;
  for (const set of sets) {
    const equals = set.indexOf('=');
    if (equals <= 0)
      throw new UsageError(`--set takes path=value, such as data.full_name=Ada (got "${set}")`);
    const path = set.slice(0, equals).split('.');
    const raw = set.slice(equals + 1);
    if (path.length === 1 && ENVELOPE_NAMES.includes(path[0] as string)) {
      id = raw;
      continue;
    }
    const [head, field, ...rest] = path;
    if (head !== 'data' || field === undefined || field === '') {
      const hint = names.includes(head as string) ? `data.${head}` : undefined;
      throw new UsageError(
        `--set ${path.join('.')}: set data fields as data.<field>${hint ? `; did you mean "${hint}"?` : ''} (or id=<event id>)`,
      );
    }
    if (!names.includes(field)) {
      throw new UsageError(`--set data.${field}: ${unknownFieldReason(type, layout, field, 'data.')}`);
    }
    if (rest.length === 0) data[field] = value(raw);
    else {
      // A nested path edits a copy of the default object, so its other fields stay realistic.
      const base = data[field] ?? structuredClone(defaults[field] ?? {});
      let node = base as Record<string, unknown>;
      for (const key of rest.slice(0, -1)) {
        // A path through `__proto__` would write to every object of this process.
        if (!Object.hasOwn(node, key) && key in node)
          throw new UsageError(`--set ${path.join('.')}: "${key}" is not a field name`);
        if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
        node = node[key] as Record<string, unknown>;
      }
      node[rest.at(-1) as string] = value(raw);
      data[field] = base;
    }
    const nested = unknownNestedField(type, layout, field, data[field], 'data.');
    if (nested !== undefined) throw new UsageError(`--set ${path.join('.')}: ${nested}`);
  }
  return id === undefined ? { data } : { data, id };
}
