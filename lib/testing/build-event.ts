import { CloudEvent, HTTP } from 'cloudevents';
import { familyOf, type EventType } from '../events/catalogue';
import type { Layout } from '../events/webhook-event';
import { defaultLayoutAData, SCHEMA_VERSIONS, toLayoutBData } from './default-data';

export interface BuildEventOptions {
  /** `'A'` (current, with `dataschema`) or `'B'` (earlier flat layout). Defaults to `'A'`. */
  layout?: Layout;
  /** The event id. Defaults to a fresh UUID. */
  id?: string;
  /** RFC 3339 time. Defaults to now. */
  time?: string;
  /** Layout A's `source` is `/service/<origin>`. Defaults to `'access-grid'`. */
  origin?: string;
  /** Base of layout A's `dataschema` URL. Defaults to `'https://service.example'`. */
  schemaBaseUrl?: string;
}

/** A delivery body exactly as the Service sends it: a CloudEvents 1.0 envelope in JSON. */
export interface DeliveryEnvelope {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  datacontenttype: 'application/json';
  dataschema?: string;
  time: string;
  data: Record<string, unknown>;
}

/**
 * Builds a valid delivery of `type` in layout A or B, with realistic data for its family. `data`
 * overrides fields in the chosen layout's own names (`access_pass_id`, not `id`, for layout B); a
 * field set to `undefined` is removed.
 */
export function buildEvent(
  type: EventType | (string & {}),
  data: Record<string, unknown> = {},
  options: BuildEventOptions = {},
): DeliveryEnvelope {
  const layout = options.layout ?? 'A';
  const defaults = defaultLayoutAData(type);
  const merged: Record<string, unknown> = {
    ...(layout === 'A' ? defaults : toLayoutBData(type, defaults)),
    ...data,
  };
  for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];

  const resource = familyOf(type) ?? 'event';
  const version = SCHEMA_VERSIONS[resource] ?? '1.0.0';
  const event = new CloudEvent<Record<string, unknown>>({
    specversion: '1.0',
    type,
    ...(options.id === undefined ? {} : { id: options.id }),
    ...(options.time === undefined ? {} : { time: options.time }),
    source: layout === 'A' ? `/service/${options.origin ?? 'access-grid'}` : 'service',
    datacontenttype: 'application/json',
    ...(layout === 'A'
      ? {
          dataschema: `${options.schemaBaseUrl ?? 'https://service.example'}/schemas/${resource}/v${version}.json`,
        }
      : {}),
    data: merged,
  });
  return JSON.parse(HTTP.structured(event).body as string) as DeliveryEnvelope;
}
