import type { EventData } from './data-schemas';

/** What an entity is: the resource whose id the event's data names. */
export type EntityKind = 'access_pass' | 'card_template' | 'landing_page' | 'credential_profile' | 'account';

/** The one resource an event is about, so events of it can be put in order. */
export interface EventEntity {
  /** Which family's resource: an access pass, a card template, a landing page, a credential profile or an account. */
  kind: EntityKind;
  /** The resource's id as the event names it (layout A `data.id` or layout B `access_pass_id` for a pass). */
  id: string;
}

/** Each family whose events name one resource, and the (layout A) field that names it. */
const FIELDS: readonly (readonly [prefix: string, kind: EntityKind, field: keyof EventData])[] = [
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
  for (const [prefix, kind, field] of FIELDS) {
    if (!type.startsWith(prefix)) continue;
    const id = data[field];
    return typeof id === 'string' && id !== '' ? { kind, id } : null;
  }
  return null;
}
