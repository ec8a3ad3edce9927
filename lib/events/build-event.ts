import { randomUUID } from 'node:crypto';
import { checkOptionKeys } from '../check-option-keys';
import { didYouMean } from '../did-you-mean';
import { EVENT_TYPES, familyOf, isEventType, type EventType } from './catalogue';
import type { Layout } from './webhook-event';
import { OptionsError } from '../options-error';
import { defaultLayoutAData, SCHEMA_VERSIONS, toLayoutBData } from './default-data';
import { checkDataFields } from './check-data-fields';
import type { DataOverrides } from './event-overrides';

/** Options of {@link buildEvent} and {@link buildUnknownEvent}; an unknown one throws. */
export interface BuildEventOptions<L extends Layout = Layout> {
  /** `'A'` (current, with `dataschema`) or `'B'` (earlier flat layout). Defaults to `'A'`. */
  layout?: L | undefined;
  /** The event id. Defaults to a fresh UUID. */
  id?: string | undefined;
  /** RFC 3339 time. Defaults to now. */
  time?: string | undefined;
  /** Layout A's `source` is `/service/<origin>`. Defaults to `'access-grid'`. */
  origin?: string | undefined;
  /** Base of layout A's `dataschema` URL. Defaults to `'https://service.example'`. */
  schemaBaseUrl?: string | undefined;
}

export const BUILD_OPTION_KEYS: readonly string[] = ['layout', 'id', 'time', 'origin', 'schemaBaseUrl'];

/** A delivery body exactly as the Service sends it: a CloudEvents 1.0 envelope in JSON. */
export interface DeliveryEnvelope<T extends string = string> {
  /** Always `'1.0'`. */
  specversion: '1.0';
  /** The event id: a UUID unless given. */
  id: string;
  /** `/service/<origin>` in layout A; the Service's layout B source otherwise. */
  source: string;
  /** The event type. */
  type: T;
  /** Always `'application/json'`. */
  datacontenttype: 'application/json';
  /** Layout A's schema URL; absent in layout B. */
  dataschema?: string;
  /** The RFC 3339 time. */
  time: string;
  /** The data, in the layout's own names: realistic defaults with your overrides. */
  data: Record<string, unknown>;
}

/** Checks the options once, so a misspelled `layot: 'B'` fails instead of silently building layout A. */
export function checkBuildOptions(options: object, known: readonly string[], where: string): Layout {
  checkOptionKeys(options, known, where);
  const { layout = 'A' } = options as BuildEventOptions;
  if (layout !== 'A' && layout !== 'B') {
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      `layout must be 'A' or 'B' (got ${JSON.stringify(layout)})`,
    );
  }
  return layout;
}

/** The envelope itself, unchecked: the typed `buildEvent` and the escape hatch both end here. */
function buildEnvelope(
  type: string,
  data: Record<string, unknown>,
  options: BuildEventOptions,
  where: string,
): DeliveryEnvelope {
  const layout = checkBuildOptions(options, BUILD_OPTION_KEYS, where);
  const defaults = defaultLayoutAData(type);
  const merged: Record<string, unknown> = {
    ...(layout === 'A' ? defaults : toLayoutBData(type, defaults)),
    ...data,
  };
  for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
  const resource = familyOf(type) ?? 'event';
  const version = SCHEMA_VERSIONS[resource] ?? '1.0.0';
  const id = options.id ?? randomUUID();
  const given = options.time;
  if (typeof id !== 'string' || id.trim() === '')
    throw new TypeError(
      `[service-webhooks] ${where}: id must be a non-empty string (got ${JSON.stringify(id)})`,
    );
  if (
    given !== undefined &&
    (typeof given !== 'string' || !RFC3339.test(given) || Number.isNaN(Date.parse(given)))
  )
    throw new TypeError(
      `[service-webhooks] ${where}: time must be an RFC 3339 timestamp (got ${JSON.stringify(given)})`,
    );
  // Written as the SDK writes it: an ISO string in UTC, with milliseconds.
  const time = (given === undefined ? new Date() : new Date(given)).toISOString();
  // Built by hand, in the attribute order the CloudEvents SDK writes; a test checks the SDK reads it
  // as the same event, so the SDK stays a devDependency.
  return {
    id,
    time,
    type,
    source: layout === 'A' ? `/service/${options.origin ?? 'access-grid'}` : 'service',
    specversion: '1.0',
    datacontenttype: 'application/json',
    ...(layout === 'A'
      ? {
          dataschema: `${options.schemaBaseUrl ?? 'https://service.example'}/schemas/${resource}/v${version}.json`,
        }
      : {}),
    data: merged,
  };
}

/** RFC 3339 date-time with a zone, as CloudEvents' `time` requires. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Builds a valid delivery of a catalogue `type` in layout A or B, with realistic data for its family.
 * `data` overrides fields in the chosen layout's own names (`access_pass_id`, not `id`, for layout B),
 * only those the type's family carries, checked at compile time and at run time (with a "did you
 * mean"); a field set to `undefined` is removed. For a type or a field the catalogue does not know,
 * use {@link buildUnknownEvent}.
 */
export function buildEvent<T extends EventType, L extends Layout = 'A'>(
  type: T,
  data?: DataOverrides<L, NoInfer<T>>,
  options: BuildEventOptions<L> = {},
): DeliveryEnvelope<T> {
  return buildCatalogueEvent(type, data ?? {}, options, 'buildEvent', true) as DeliveryEnvelope<T>;
}

/**
 * A delivery of a catalogue type, with JavaScript callers' checks of what TypeScript checks: a
 * misspelled type would build an event no handler matches, and the test would pass for the wrong
 * reason. `checkFields` also checks the data's field names (the emulator, a sender, sends any).
 */
export function buildCatalogueEvent(
  type: unknown,
  data: unknown,
  options: BuildEventOptions,
  where: string,
  checkFields: boolean,
): DeliveryEnvelope {
  if (!isEventType(type)) {
    const hint = didYouMean(String(type), EVENT_TYPES);
    throw new TypeError(
      `[service-webhooks] ${where}: unknown event type ${JSON.stringify(type)}${hint === undefined ? '' : `; did you mean "${hint}"?`} For a type the catalogue does not know yet, use buildUnknownEvent.`,
    );
  }
  if (checkFields) checkDataFields(type, checkBuildOptions(options, BUILD_OPTION_KEYS, where), data, where);
  return buildEnvelope(type, data as Record<string, unknown>, options, where);
}

/**
 * The escape hatch, for forward-compatibility tests: a delivery of any type (one the Service may add
 * later) with any data (fields the spec does not define, values of the wrong kind), unchecked. Known
 * types still get their family's realistic defaults underneath.
 */
export function buildUnknownEvent(
  type: string,
  data: Record<string, unknown> = {},
  options: BuildEventOptions = {},
): DeliveryEnvelope {
  return buildEnvelope(type, data, options, 'buildUnknownEvent');
}
