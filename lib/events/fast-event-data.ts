import { z } from 'zod';
import type { EventData } from './data-schemas';

// The same patterns zod builds for the schemas in data-schemas.ts (checked by a test), so the fast
// path never accepts what the schema would refuse.
const DATE = z.core.regexes.date;
const DATETIME_LOCAL = z.core.regexes.datetime({ offset: true, local: true });
const TAG_ID = /^[0-9a-fA-F]{14}$/;

type Kind = 'text' | 'date' | 'dollars' | 'metadata' | 'tag' | 'list' | 'details' | 'devices';

const FIELDS: readonly (readonly [keyof EventData, Kind])[] = [
  ['id', 'text'],
  ['state', 'text'],
  ['full_name', 'text'],
  ['employee_id', 'text'],
  ['title', 'text'],
  ['start_date', 'date'],
  ['expiration_date', 'date'],
  ['hid_org_id', 'text'],
  ['apple_user_id', 'text'],
  ['tag_id', 'tag'],
  ['card_template_id', 'text'],
  ['landing_page_id', 'text'],
  ['credential_profile_id', 'text'],
  ['account_id', 'text'],
  ['organization_name', 'text'],
  ['current_balance', 'dollars'],
  ['threshold', 'dollars'],
  ['amount_below_threshold', 'dollars'],
  ['protocol', 'text'],
  ['metadata', 'metadata'],
  ['card_templates', 'list'],
  ['details', 'details'],
  ['devices', 'devices'],
];
const CREDENTIAL = [
  'id',
  'card_template_id',
  'platform',
  'protocol',
  'status',
  'card_number',
  'site_code',
  'file_data',
];
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

function check(kind: Kind, value: unknown): unknown {
  switch (kind) {
    case 'text':
      return typeof value === 'string' ? value : UNSURE;
    case 'date':
      return typeof value === 'string' && (DATE.test(value) || DATETIME_LOCAL.test(value)) ? value : UNSURE;
    case 'dollars':
      return typeof value === 'number' && Number.isFinite(value) ? value : UNSURE;
    case 'tag':
      return typeof value === 'string' && TAG_ID.test(value) ? value : UNSURE;
    case 'metadata':
      return isObject(value) ? { ...value } : UNSURE;
    case 'list':
      return Array.isArray(value) ? [...(value as unknown[])] : UNSURE;
    case 'details':
      return credential(value, CREDENTIAL);
    case 'devices': {
      if (!Array.isArray(value)) return UNSURE;
      const devices: unknown[] = [];
      for (const device of value as unknown[]) {
        const checked = credential(device, DEVICE);
        if (checked === UNSURE) return UNSURE;
        devices.push(checked);
      }
      return devices;
    }
  }
}

/**
 * The canonical data object as `eventDataSchema` would return it, built by hand for the shapes the
 * Service sends (about a tenth of zod's cost); `undefined` when anything is unusual, so the schema
 * decides and names the field. A property test checks both agree.
 */
export function fastEventData(raw: Record<string, unknown>): EventData | undefined {
  const out: Record<string, unknown> = { ...raw };
  for (const [field, kind] of FIELDS) {
    const value = raw[field];
    if (value == null) {
      out[field] = null;
      continue;
    }
    const checked = check(kind, value);
    if (checked === UNSURE) return undefined;
    out[field] = checked;
  }
  return out as EventData;
}
