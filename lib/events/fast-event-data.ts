import { EVENT_DATA_FIELDS, type EventData } from './data-schemas';

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

/** The schema's own field names: the object literal below must fill each (the property test checks). */
const FIELD_SET: ReadonlySet<string> = new Set<string>(EVENT_DATA_FIELDS);

/**
 * Set while one call builds its output when a value is one the fast path does not decide; the zod
 * schema then does, with its error messages. A flag, not a marker value checked field by field: that
 * check was 23 keyed reads of the output per event (megamorphic, one site for every name).
 */
let doubted = false;
const unsure = (): null => {
  doubted = true;
  return null;
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (v: unknown) => (v == null ? null : typeof v === 'string' ? v : unsure());

/**
 * A credential (`details`, or a device with `type`) as the schema's looseObject returns it: a copy,
 * unknown keys kept, every field of CREDENTIAL_FIELDS present (a test checks the names). The fields are
 * read by name, one site each, so V8 keeps each read monomorphic.
 */
function credential(value: unknown, device: boolean): Record<string, unknown> | null {
  if (!isObject(value)) return unsure();
  const out: Record<string, unknown> = { ...value };
  out.id = text(value.id);
  out.card_template_id = text(value.card_template_id);
  out.platform = text(value.platform);
  out.protocol = text(value.protocol);
  out.status = text(value.status);
  out.card_number = text(value.card_number);
  out.site_code = text(value.site_code);
  out.file_data = text(value.file_data);
  if (device) out.type = text(value.type);
  return out;
}

/** `[0-9a-fA-F]{14}` (TAG_ID) by character codes: no regex call for the one fixed-length form. */
function isTagId(v: string): boolean {
  if (v.length !== 14) return false;
  for (let i = 0; i < 14; i++) {
    const c = v.charCodeAt(i);
    const lower = c | 0x20; // folds A-F onto a-f (only letters are folded: 0x10-0x19 | 0x20 is a digit)
    if (!((c >= 0x30 && c <= 0x39) || (lower >= 0x61 && lower <= 0x66))) return false;
  }
  return true;
}

// DATE matches only ten characters and DATETIME_LOCAL never does (it needs the `T`): one test, not two.
const date = (v: unknown) =>
  v == null
    ? null
    : typeof v === 'string' && (v.length === 10 ? DATE : DATETIME_LOCAL).test(v)
      ? v
      : unsure();
const dollars = (v: unknown) =>
  v == null ? null : typeof v === 'number' && Number.isFinite(v) ? v : unsure();
const tag = (v: unknown) => (v == null ? null : typeof v === 'string' && isTagId(v) ? v : unsure());
// Copies, as the schema's record and array return: a handler changing event.data leaves event.raw alone.
const metadata = (v: unknown) => (v == null ? null : isObject(v) ? { ...v } : unsure());
const list = (v: unknown) => (v == null ? null : Array.isArray(v) ? [...(v as unknown[])] : unsure());
const details = (v: unknown) => (v == null ? null : credential(v, false));

function devices(v: unknown): unknown {
  if (v == null) return null;
  if (!Array.isArray(v)) return unsure();
  const out: unknown[] = [];
  for (let i = 0; i < v.length; i++) out.push(credential(v[i], true));
  return out;
}

/**
 * The canonical data object as `eventDataSchema` would return it, built by hand for the shapes the
 * Service sends (about a tenth of zod's cost); `undefined` when anything is unusual, so the schema
 * decides and names the field. A property test checks both agree.
 */
export function fastEventData(raw: Record<string, unknown>): EventData | undefined {
  doubted = false;
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
  if (doubted) return undefined;
  passUnknownKeys(raw, out);
  return out as EventData;
}

/**
 * The last key list found to hold only the schema's fields. The events of one sender share their keys
 * in one order, so comparing the list with this one (`===` on the parser's interned keys) replaces a
 * Set lookup per key. One list, never longer than the schema's fields: hostile input cannot grow it.
 */
let lastKnownKeys: readonly string[] = [];

function sameKeys(keys: readonly string[], known: readonly string[]): boolean {
  if (keys.length !== known.length) return false;
  for (let i = 0; i < keys.length; i++) if (keys[i] !== known[i]) return false;
  return true;
}

/** Fields the spec does not name pass through, as the schema's looseObject lets them. */
function passUnknownKeys(raw: Record<string, unknown>, out: Record<string, unknown>): void {
  const keys = Object.keys(raw);
  if (sameKeys(keys, lastKnownKeys)) return;
  let unknown = false;
  for (const key of keys) {
    if (FIELD_SET.has(key)) continue;
    unknown = true;
    // An own `__proto__` key would set the output's prototype: the schema drops it, so does this.
    if (key !== '__proto__') out[key] = raw[key];
  }
  if (!unknown) lastKnownKeys = keys;
}
