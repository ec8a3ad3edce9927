/** Every event type the Service sends (spec section 6). Everything else here is derived from it. */
export const EVENT_TYPES = [
  'ag.access_pass.issued',
  'ag.access_pass.activated',
  'ag.access_pass.updated',
  'ag.access_pass.suspended',
  'ag.access_pass.resumed',
  'ag.access_pass.unlinked',
  'ag.access_pass.deleted',
  'ag.access_pass.expired',
  'ag.access_pass.renewed',
  'ag.access_pass.failed',
  'ag.access_pass.devices.added',
  'ag.access_pass.devices.suspended',
  'ag.access_pass.devices.resumed',
  'ag.card_template.created',
  'ag.card_template.updated',
  'ag.card_template.requested_publishing',
  'ag.card_template.published',
  'ag.card_template_pair.created',
  'ag.landing_page.created',
  'ag.landing_page.updated',
  'ag.landing_page.attached_to_template',
  'ag.credential_profile.created',
  'ag.credential_profile.attached_to_template',
  'ag.hid_org.created',
  'ag.hid_org.activated',
  'ag.account_balance.low',
  'ag.webhook.cert_expiring',
] as const;

/** One of the 27 event types the Service sends, from {@link EVENT_TYPES}. */
export type EventType = (typeof EVENT_TYPES)[number];

/** The resource a type belongs to: `ag.access_pass.devices.added` → `access_pass`. */
export type EventFamily = EventType extends infer T
  ? T extends `ag.${infer F}.${string}`
    ? F
    : never
  : never;

/** The `ag.access_pass.*` types, the device events included. */
export type AccessPassEventType = Extract<EventType, `ag.access_pass.${string}`>;
/** The `ag.access_pass.devices.*` types: each event carries exactly one device. */
export type AccessPassDeviceEventType = Extract<EventType, `ag.access_pass.devices.${string}`>;
/** The `ag.card_template.*` types. */
export type CardTemplateEventType = Extract<EventType, `ag.card_template.${string}`>;
/** The `ag.card_template_pair.*` types. */
export type CardTemplatePairEventType = Extract<EventType, `ag.card_template_pair.${string}`>;
/** The `ag.landing_page.*` types. */
export type LandingPageEventType = Extract<EventType, `ag.landing_page.${string}`>;
/** The `ag.credential_profile.*` types. */
export type CredentialProfileEventType = Extract<EventType, `ag.credential_profile.${string}`>;
/** The `ag.hid_org.*` types. */
export type HidOrgEventType = Extract<EventType, `ag.hid_org.${string}`>;
/** The `ag.account_balance.*` types. */
export type AccountBalanceEventType = Extract<EventType, `ag.account_balance.${string}`>;
/** The `ag.webhook.*` types, about the webhook itself (`ag.webhook.cert_expiring`). */
export type WebhookEventType = Extract<EventType, `ag.webhook.${string}`>;

type PatternsOf<S extends string, Seen extends string = ''> = S extends `${infer Head}.${infer Rest}`
  ? `${Seen}${Head}.*` | PatternsOf<Rest, `${Seen}${Head}.`>
  : never;

/** A wildcard over a prefix of the types: `ag.access_pass.*`, `ag.access_pass.devices.*`, `ag.*`. */
export type EventPattern = PatternsOf<EventType>;

/** The types a type or a pattern covers. */
export type TypesMatching<P extends string> = P extends `${infer Prefix}*`
  ? Extract<EventType, `${Prefix}${string}`>
  : Extract<EventType, P>;

const EVENT_TYPE_SET: ReadonlySet<string> = new Set(EVENT_TYPES);

/** Whether `value` is one of the catalogue's {@link EventType}s (a string the Service may add later is not). */
export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && EVENT_TYPE_SET.has(value);
}

function patternsOf(type: string): string[] {
  const parts = type.split('.');
  return parts.slice(0, -1).map((_, index) => `${parts.slice(0, index + 1).join('.')}.*`);
}

/** Every pattern the catalogue allows, each with the types it covers. */
export const EVENT_PATTERNS: ReadonlyMap<EventPattern, readonly EventType[]> = (() => {
  const patterns = new Map<EventPattern, EventType[]>();
  for (const type of EVENT_TYPES) {
    for (const pattern of patternsOf(type) as EventPattern[]) {
      patterns.set(pattern, [...(patterns.get(pattern) ?? []), type]);
    }
  }
  return patterns;
})();

/** Whether `value` is a wildcard the catalogue allows, such as `ag.access_pass.*` (see {@link EventPattern}). */
export function isEventPattern(value: unknown): value is EventPattern {
  return typeof value === 'string' && EVENT_PATTERNS.has(value as EventPattern);
}

const FAMILY = /^ag\.([a-z0-9_]+)\./;

/** The family of any `ag.<family>.…` type, including types the catalogue does not know yet. */
export function familyOf(type: string): string | null {
  const match = FAMILY.exec(type);
  return match ? (match[1] as string) : null;
}
