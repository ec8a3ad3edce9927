import type { z } from 'zod';
import { dataSchemas, LAYOUT_A_FIELDS, LAYOUT_B_FIELDS, type EventData } from './data-schemas';
import { fastEventData } from './fast-event-data';
import { InvalidEventError, schemaError } from './invalid-event-error';
import type { EntityKind, EventEntity, Layout, SchemaVersion, UnknownWebhookEvent } from './webhook-event';

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
  // Most events carry none of layout B's fields: `in` with a constant name is answered from the
  // object's shape without a call (LAYOUT_B_FIELDS spelled out; a test holds the two together), and
  // only then is each looked for as an own key, so an inherited one does not count.
  const maybeB =
    'access_pass_id' in data ||
    'device' in data ||
    'card_number' in data ||
    'site_code' in data ||
    'file_data' in data;
  if (!maybeB) return undefined;
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

const SCHEMA_URL = /\/schemas\/([A-Za-z0-9_-]+)\/v(\d+)\.(\d+)\.(\d+)\.json$/;

/** The envelope attributes normalization reads, already checked by the receiver. */
export interface EnvelopeAttributes {
  id: string;
  type: string;
  source: string;
  time?: string | null | undefined;
  dataschema?: string | null | undefined;
}

/**
 * The last `dataschema` read and its parts. Nearly every event of one type carries the same URL, so one
 * remembered entry spares the regex and its three numbers; a different string replaces it (bounded: one).
 */
let lastSchema: string | undefined;
let lastVersion: SchemaVersion | null = null;

/** `…/schemas/<resource>/v<major>.<minor>.<patch>.json` → its parts; any other form → null. */
export function parseSchemaVersion(dataschema: string | null | undefined): SchemaVersion | null {
  if (dataschema == null) return null;
  if (dataschema !== lastSchema) {
    const match = SCHEMA_URL.exec(dataschema);
    lastVersion = null;
    if (match) {
      const [, resource, major, minor, patch] = match as unknown as [string, string, string, string, string];
      lastVersion = { resource, major: Number(major), minor: Number(minor), patch: Number(patch) };
    }
    lastSchema = dataschema;
  }
  // A new object each call: an event's schemaVersion is its handler's, never shared with the next one.
  const v = lastVersion;
  return v === null ? null : { resource: v.resource, major: v.major, minor: v.minor, patch: v.patch };
}

function dataObject(data: unknown): Record<string, unknown> {
  if (data === undefined || data === null) return {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new InvalidEventError({
      slug: 'invalid-data',
      detail: 'The event "data" must be a JSON object (datacontenttype application/json).',
      field: 'data',
    });
  }
  return data as Record<string, unknown>;
}

function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw schemaError(result.error, { prefix: 'data.', slug: 'invalid-data', what: 'Event data field' });
  }
  return result.data;
}

/**
 * Lifts layout B (spec 2.4, the earlier flat data) into layout A names, as the README's "Layout B is
 * lifted into layout A names" promises: the one mapping between the two layouts.
 */
function liftLayoutB(type: string, raw: Record<string, unknown>): Record<string, unknown> {
  const b = parseOrThrow(dataSchemas().layoutBDataSchema, raw);
  const { access_pass_id, device, card_number, site_code, file_data, ...rest } = b;
  const hasCredential = card_number != null || site_code != null || file_data != null;
  return {
    ...rest,
    id: access_pass_id ?? null,
    devices: device == null ? null : [device],
    details:
      hasCredential || type === 'ag.access_pass.issued'
        ? { card_number: card_number ?? null, site_code: site_code ?? null, file_data: file_data ?? null }
        : null,
  };
}

/** Each family whose events name one resource, and the (layout A) field that names it. */
const ENTITY_FIELDS: readonly (readonly [prefix: string, kind: EntityKind, field: keyof EventData])[] = [
  // Layout B's access_pass_id is lifted into `id` by normalization, so both layouts read `id`.
  ['ag.access_pass.', 'access_pass', 'id'],
  ['ag.card_template.', 'card_template', 'card_template_id'],
  ['ag.landing_page.', 'landing_page', 'landing_page_id'],
  ['ag.credential_profile.', 'credential_profile', 'credential_profile_id'],
  ['ag.account_balance.', 'account', 'account_id'],
];

/**
 * The entity of an event from the spec's id fields: access-pass events → the pass, card-template
 * events → `card_template_id`, landing-page → `landing_page_id`, credential-profile →
 * `credential_profile_id`, account-balance → `account_id`. Null for the other families (a template
 * pair, an HID org, the webhook) and when the field is missing or empty. Types the catalogue does not
 * know yet count in their family.
 */
export function entityOf(type: string, data: EventData): EventEntity | null {
  const entry = entityFieldOf(type);
  if (entry === undefined) return null;
  const id = data[entry[2]];
  return typeof id === 'string' && id !== '' ? { kind: entry[1], id } : null;
}

/** The last type looked up and its ENTITY_FIELDS row: a run of one type skips the prefix tests. */
let lastEntityType: string | undefined;
let lastEntityRow: (typeof ENTITY_FIELDS)[number] | undefined;

function entityFieldOf(type: string): (typeof ENTITY_FIELDS)[number] | undefined {
  if (type !== lastEntityType) {
    lastEntityRow = ENTITY_FIELDS.find(([prefix]) => type.startsWith(prefix));
    lastEntityType = type;
  }
  return lastEntityRow;
}

/**
 * A checked envelope and its data (already decoded from `data_base64` when it came so) as the
 * normalized event every handler receives; `raw` is the envelope as received. Typed as it is at run
 * time, every field present; handlers see it through their type's narrower data.
 */
export function normalizeEvent(
  envelope: EnvelopeAttributes,
  data: unknown,
  raw: Readonly<Record<string, unknown>>,
): UnknownWebhookEvent {
  const rawData = dataObject(data);
  const layout: Layout = detectLayout(envelope, rawData);
  const canonical = layout === 'A' ? rawData : liftLayoutB(envelope.type, rawData);
  const checked: EventData =
    fastEventData(canonical) ?? parseOrThrow(dataSchemas().eventDataSchema, canonical);
  const dataschema = envelope.dataschema ?? null;
  return {
    id: envelope.id,
    type: envelope.type,
    source: envelope.source,
    time: envelope.time ?? null,
    layout,
    dataschema,
    schemaVersion: parseSchemaVersion(dataschema),
    data: checked,
    entity: entityOf(envelope.type, checked),
    raw,
  };
}
