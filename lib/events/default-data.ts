import { familyOf, type EventType } from './catalogue';
import type { AccessPassState } from './data-schemas';
import { LAYOUT_B_KEPT } from './family-fields';

/** Schema versions differ per resource, as the Service's do (spec 9). */
export const SCHEMA_VERSIONS: Readonly<Record<string, string>> = {
  access_pass: '1.4.0',
  card_template: '2.1.0',
  card_template_pair: '1.0.0',
  landing_page: '1.2.1',
  credential_profile: '1.1.0',
  hid_org: '1.0.2',
  account_balance: '1.0.0',
  webhook: '1.0.0',
};

const TEMPLATE_ID = 'ct_2f8a1c9e';
const PASS_ID = 'ap_7d41b0e2';

function device(protocol: string): Record<string, unknown> {
  return {
    id: 'dev_5c2e91aa',
    type: 'iphone',
    card_template_id: TEMPLATE_ID,
    platform: 'apple',
    protocol,
    status: 'installed',
    card_number: '100234',
    site_code: '69',
    file_data: '0a1b2c3d4e5f',
  };
}

/**
 * The pass's state after each access pass event, in the values spec 3 lists (created, active,
 * suspended, unlink, deleted); the rest leave it active. The spec lists no `expired` state: an expired
 * pass no longer opens doors, so it reads as suspended. A device event is about one device, not the
 * pass, which stays active.
 */
const STATE_AFTER: Readonly<Record<string, AccessPassState>> = {
  'ag.access_pass.issued': 'created',
  'ag.access_pass.failed': 'created',
  'ag.access_pass.suspended': 'suspended',
  'ag.access_pass.expired': 'suspended',
  'ag.access_pass.unlinked': 'unlink',
  'ag.access_pass.deleted': 'deleted',
};

function accessPassData(type: string): Record<string, unknown> {
  const protocol = type.includes('.devices.') || type.endsWith('.failed') ? 'seos' : 'desfire';
  // An expired pass's term is over: its dates are a year earlier.
  const year = type === 'ag.access_pass.expired' ? 2025 : 2026;
  const data: Record<string, unknown> = {
    id: PASS_ID,
    state: Object.hasOwn(STATE_AFTER, type) ? STATE_AFTER[type] : 'active',
    full_name: 'Ada Lovelace',
    employee_id: 'E-1024',
    title: 'Analyst',
    start_date: `${year}-01-05T09:00:00Z`,
    expiration_date: `${year + 1}-01-05T09:00:00Z`,
    hid_org_id: protocol === 'seos' ? 'hid_org_31' : null,
    apple_user_id: null,
    tag_id: '04a1b2c3d4e5f6',
    card_template_id: TEMPLATE_ID,
    protocol,
    metadata: { department: 'research' },
    card_templates: [{ id: TEMPLATE_ID }],
  };
  if (type === 'ag.access_pass.issued') {
    const { type: _kind, ...details } = device(protocol);
    data.details = { ...details, id: 'cred_88e0', status: 'issued' };
  } else {
    const one = device(protocol);
    // The device a devices.suspended event is about is the one suspended.
    if (type === 'ag.access_pass.devices.suspended') one.status = 'suspended';
    data.devices = [one];
  }
  return data;
}

/** The template an `attached_to_template` event names; other types name none. */
function attachedTo(type: string): Record<string, unknown> {
  return type.endsWith('.attached_to_template') ? { card_template_id: TEMPLATE_ID } : {};
}

/** Realistic layout A data for a type: every field the spec defines for its family. */
export function defaultLayoutAData(type: EventType | string): Record<string, unknown> {
  switch (familyOf(type)) {
    case 'access_pass':
      return accessPassData(type);
    case 'card_template':
      return { card_template_id: TEMPLATE_ID, protocol: 'desfire', metadata: { color: 'navy' } };
    case 'card_template_pair':
      return {
        card_template_id: TEMPLATE_ID,
        card_templates: [{ id: TEMPLATE_ID }, { id: 'ct_9b03d4f7' }],
        metadata: {},
      };
    case 'landing_page':
      return { landing_page_id: 'lp_41c7', ...attachedTo(type) };
    case 'credential_profile':
      return { credential_profile_id: 'cp_93aa', ...attachedTo(type), protocol: 'seos' };
    case 'hid_org':
      return { hid_org_id: 'hid_org_31', metadata: {} };
    case 'account_balance':
      return {
        account_id: 'acct_1f2e',
        organization_name: 'Acme Corp',
        current_balance: 42.5,
        threshold: 100,
        amount_below_threshold: 57.5,
      };
    case 'webhook':
      // What the emulator sends about its own client certificate (the spec does not show this data).
      return {
        certificate_fingerprint:
          'A1:B2:C3:D4:E5:F6:07:18:29:3A:4B:5C:6D:7E:8F:90:A1:B2:C3:D4:E5:F6:07:18:29:3A:4B:5C:6D:7E:8F:90',
        certificate_subject: 'CN=service-webhooks client',
        expires_at: new Date(Date.now() + 14 * DAY).toISOString(),
        days_remaining: 14,
        metadata: {},
      };
    default:
      return { metadata: {} };
  }
}

const DAY = 24 * 60 * 60 * 1000;

/** The same event in the earlier flat layout (spec 2.4). */
export function toLayoutBData(type: string, a: Record<string, unknown>): Record<string, unknown> {
  const b: Record<string, unknown> = {};
  for (const field of LAYOUT_B_KEPT) if (a[field] != null) b[field] = a[field];
  // The spec shows neither layout of this type's data: the same fields in both.
  if (familyOf(type) === 'webhook') return { ...a };
  if (familyOf(type) !== 'access_pass') return b;
  b.access_pass_id = a.id;
  if (type.startsWith('ag.access_pass.devices.')) {
    const [first] = (a.devices as Record<string, unknown>[] | undefined) ?? [];
    b.device = { type: first?.type ?? 'iphone', id: first?.id ?? 'dev_5c2e91aa' };
  }
  const details = a.details as Record<string, unknown> | undefined;
  if (details) {
    b.card_number = details.card_number;
    b.site_code = details.site_code;
    b.file_data = details.file_data;
  }
  return b;
}
