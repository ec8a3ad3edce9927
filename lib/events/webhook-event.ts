import type {
  AccessPassDeviceEventType,
  AccountBalanceEventType,
  CardTemplateEventType,
  EventType,
} from './catalogue';
import type { CredentialDetails, Device, EventData, Metadata, Protocol } from './data-schemas';
import type { DataFieldOf } from './family-fields';

/** What an entity is: the resource whose id the event's data names. */
export type EntityKind = 'access_pass' | 'card_template' | 'landing_page' | 'credential_profile' | 'account';

/** The one resource an event is about, so events of it can be put in order. */
export interface EventEntity {
  /** Which family's resource: an access pass, a card template, a landing page, a credential profile or an account. */
  kind: EntityKind;
  /** The resource's id as the event names it (layout A `data.id` or layout B `access_pass_id` for a pass). */
  id: string;
}

/**
 * The data of a type's family, and only that: the fields spec 2.2 names for it, each nullable (a field
 * the event did not carry is `null`). Extra fields still pass through at run time; read them from `raw`.
 */
export type FamilyEventData<T extends EventType> = Pick<EventData, DataFieldOf<T>>;

/** Every access-pass event; rule 2: `details` is only on `issued`, `devices` on the rest. */
export type AccessPassEventData = Pick<EventData, DataFieldOf<'ag.access_pass.updated'> | 'details'>;
/** Rule 2: `issued` carries the credential details and no devices. */
export type AccessPassIssuedData = Omit<AccessPassEventData, 'details' | 'devices'> & {
  /** The issued credential: card number, site code, file data. */
  details: CredentialDetails;
  /** Always null on `issued`: a device comes with the device events. */
  devices: null;
};
/** Rule 3: a device event carries exactly the affected device. */
export type AccessPassDeviceEventData = Omit<AccessPassEventData, 'devices'> & {
  /** The one device the event is about (layout B's `device`, lifted into a list). */
  devices: [Device];
};
/** Rule 4: a card-template event carries the template's id, protocol and metadata. */
export type CardTemplateEventData = Omit<
  FamilyEventData<CardTemplateEventType>,
  'card_template_id' | 'protocol' | 'metadata'
> & {
  /** The template the event is about. */
  card_template_id: string;
  /** The template's credential protocol. */
  protocol: Protocol;
  /** The template's metadata, as sent. */
  metadata: Metadata;
};
/** Rule 5: `ag.account_balance.low` carries the five balance fields, as numbers. */
export type AccountBalanceEventData = Omit<
  FamilyEventData<AccountBalanceEventType>,
  'account_id' | 'organization_name' | 'current_balance' | 'threshold' | 'amount_below_threshold'
> & {
  /** The account whose balance is low. */
  account_id: string;
  /** The account's organization. */
  organization_name: string;
  /** The balance now, as a number. */
  current_balance: number;
  /** The balance the account set as its alert threshold. */
  threshold: number;
  /** How far the balance is below `threshold`. */
  amount_below_threshold: number;
};

/** The data of each type: the fields of its family (spec 2.2), with what rules 2–5 promise for it. */
export type EventDataFor<T extends EventType> = T extends 'ag.access_pass.issued'
  ? AccessPassIssuedData
  : T extends AccessPassDeviceEventType
    ? AccessPassDeviceEventData
    : T extends `ag.access_pass.${string}`
      ? AccessPassEventData
      : T extends CardTemplateEventType
        ? CardTemplateEventData
        : T extends AccountBalanceEventType
          ? AccountBalanceEventData
          : FamilyEventData<T>;

/** The data type of every catalogue type, by type: `EventDataMap['ag.access_pass.issued']`. */
export type EventDataMap = { [T in EventType]: EventDataFor<T> };

/** Parsed from a layout A `dataschema`: `…/schemas/access_pass/v1.2.0.json`. */
export interface SchemaVersion {
  /** The resource the schema describes: `access_pass`. */
  resource: string;
  /** The schema's major version. */
  major: number;
  /** The schema's minor version. */
  minor: number;
  /** The schema's patch version. */
  patch: number;
}

/** The two envelope layouts the Service sends: `'A'` (current, with `dataschema`) or `'B'` (the earlier flat layout). */
export type Layout = 'A' | 'B';

/** The fields every normalized event has, for a type `T` and its data `D`. */
export interface WebhookEventBase<T extends string, D> {
  /** The CloudEvent `id`, as sent: with `source`, the key a redelivery is recognised by. */
  id: string;
  /** The event type, as sent. */
  type: T;
  /** The CloudEvent `source`, as sent. */
  source: string;
  /** The RFC 3339 time as sent, or null when the event had none. */
  time: string | null;
  /** The layout the Service sent, decided by which fields are present. */
  layout: Layout;
  /** null;|Layout A's schema URL; null for layout B. */
  dataschema: string | null;
  /** null;|The version parsed from `dataschema`; null for layout B or an unparsable URL. */
  schemaVersion: SchemaVersion | null;
  /** The data in layout A's names whichever layout was sent; every field the spec defines is present, null when not carried. */
  data: D;
  /** The resource the event is about (`{ kind: 'access_pass', id }`, …), or null: see `entityOf`. */
  entity: EventEntity | null;
  /** The envelope exactly as received. */
  raw: Readonly<Record<string, unknown>>;
}

/** A normalized event of a catalogue type; a union of types distributes, so `type` narrows `data`. */
export type WebhookEvent<T extends EventType = EventType> = T extends EventType
  ? WebhookEventBase<T, EventDataMap[T]>
  : never;

/** An event of a type the catalogue does not know yet (the Service may add types). */
export type UnknownWebhookEvent = WebhookEventBase<string, EventData>;

/** A normalized event of any type, known to the catalogue or not: what `onAny` and `onUnhandled` handlers get. */
export type AnyWebhookEvent = WebhookEvent | UnknownWebhookEvent;
