import { CREDENTIAL_FIELDS, EVENT_DATA_FIELDS, type EventData } from './data-schemas';

// The patterns zod builds for the schemas in data-schemas.ts, written out so the fast path needs no
// zod (a test checks they are the same), and never accepts what the schema would refuse.
const YMD =
  '(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))';
export const DATE = new RegExp(`^${YMD}$`);
export const DATETIME_LOCAL = new RegExp(
  `^${YMD}T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d))|(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d+)?)?)$`,
);
export const DATETIME_OFFSET = new RegExp(
  `^${YMD}T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$`,
);
const TAG_ID = /^[0-9a-fA-F]{14}$/;

/** The schema's own field names: the object literal below must fill each (the property test checks). */
const FIELDS: readonly (keyof EventData)[] = EVENT_DATA_FIELDS;
const FIELD_SET: ReadonlySet<string> = new Set(FIELDS);
const CREDENTIAL: readonly string[] = CREDENTIAL_FIELDS;
const DEVICE = [...CREDENTIAL, 'type'];
/** Marks a value the fast path does not decide; the zod schema then does, with its error messages. */
const UNSURE = Symbol('unsure');

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function credential(value: unknown, fields: readonly string[]): Record<string, unknown> | typeof UNSURE {
  if (!isObject(value)) return UNSURE;
  const out: Record<string, unknown> = { ...value };
  for (const field of fields) {
    const v = value[field];
    if (v == null) out[field] = null;
    else if (typeof v !== 'string') return UNSURE;
  }
  return out;
}

const text = (v: unknown) => (v == null ? null : typeof v === 'string' ? v : UNSURE);
// DATE matches only ten characters and DATETIME_LOCAL never does (it needs the `T`): one test, not two.
const date = (v: unknown) =>
  v == null ? null : typeof v === 'string' && (v.length === 10 ? DATE : DATETIME_LOCAL).test(v) ? v : UNSURE;
const dollars = (v: unknown) => (v == null ? null : typeof v === 'number' && Number.isFinite(v) ? v : UNSURE);
const tag = (v: unknown) => (v == null ? null : typeof v === 'string' && TAG_ID.test(v) ? v : UNSURE);
const metadata = (v: unknown) => (v == null ? null : isObject(v) ? { ...v } : UNSURE);
const list = (v: unknown) => (v == null ? null : Array.isArray(v) ? [...(v as unknown[])] : UNSURE);
const details = (v: unknown) => (v == null ? null : credential(v, CREDENTIAL));

function devices(v: unknown): unknown {
  if (v == null) return null;
  if (!Array.isArray(v)) return UNSURE;
  const out: unknown[] = [];
  for (const device of v as unknown[]) {
    const checked = credential(device, DEVICE);
    if (checked === UNSURE) return UNSURE;
    out.push(checked);
  }
  return out;
}

/**
 * The canonical data object as `eventDataSchema` would return it, built by hand for the shapes the
 * Service sends (about a tenth of zod's cost); `undefined` when anything is unusual, so the schema
 * decides and names the field. A property test checks both agree.
 */
export function fastEventData(raw: Record<string, unknown>): EventData | undefined {
  // One object literal, so every event's data has the same shape (V8 keeps it fast).
  const out: Record<string, unknown> = {
    id: text(raw.id),
    state: text(raw.state),
    full_name: text(raw.full_name),
    employee_id: text(raw.employee_id),
    title: text(raw.title),
    start_date: date(raw.start_date),
    expiration_date: date(raw.expiration_date),
    hid_org_id: text(raw.hid_org_id),
    apple_user_id: text(raw.apple_user_id),
    tag_id: tag(raw.tag_id),
    card_template_id: text(raw.card_template_id),
    landing_page_id: text(raw.landing_page_id),
    credential_profile_id: text(raw.credential_profile_id),
    account_id: text(raw.account_id),
    organization_name: text(raw.organization_name),
    current_balance: dollars(raw.current_balance),
    threshold: dollars(raw.threshold),
    amount_below_threshold: dollars(raw.amount_below_threshold),
    protocol: text(raw.protocol),
    metadata: metadata(raw.metadata),
    card_templates: list(raw.card_templates),
    details: details(raw.details),
    devices: devices(raw.devices),
  };
  for (const field of FIELDS) if (out[field] === UNSURE) return undefined;
  // Fields the spec does not name pass through, as the schema's looseObject lets them.
  for (const key of Object.keys(raw)) {
    // An own `__proto__` key would set the output's prototype: the schema drops it, so does this.
    if (!FIELD_SET.has(key) && key !== '__proto__') out[key] = raw[key];
  }
  return out as EventData;
}
