import type {
  AccessPassDeviceEventType,
  AccountBalanceEventType,
  CardTemplateEventType,
  EventType,
} from './catalogue';
import type { CredentialDetails, Device, EventData, Metadata, Protocol } from './data-schemas';
import type { EventEntity } from './event-entity';

/** Rule 2: `issued` carries the credential details and no devices. */
export type AccessPassIssuedData = Omit<EventData, 'details' | 'devices'> & {
  details: CredentialDetails;
  devices: null;
};
/** Rule 3: a device event carries exactly the affected device. */
export type AccessPassDeviceEventData = Omit<EventData, 'devices'> & { devices: [Device] };
/** Rule 4. */
export type CardTemplateEventData = Omit<EventData, 'card_template_id' | 'protocol' | 'metadata'> & {
  card_template_id: string;
  protocol: Protocol;
  metadata: Metadata;
};
/** Rule 5. */
export type AccountBalanceEventData = Omit<
  EventData,
  'account_id' | 'organization_name' | 'current_balance' | 'threshold' | 'amount_below_threshold'
> & {
  account_id: string;
  organization_name: string;
  current_balance: number;
  threshold: number;
  amount_below_threshold: number;
};

/** The data of each type: what the spec promises for it, and no more. */
export type EventDataFor<T extends EventType> = T extends 'ag.access_pass.issued'
  ? AccessPassIssuedData
  : T extends AccessPassDeviceEventType
    ? AccessPassDeviceEventData
    : T extends CardTemplateEventType
      ? CardTemplateEventData
      : T extends AccountBalanceEventType
        ? AccountBalanceEventData
        : EventData;

export type EventDataMap = { [T in EventType]: EventDataFor<T> };

/** Parsed from a layout A `dataschema`: `…/schemas/access_pass/v1.2.0.json`. */
export interface SchemaVersion {
  resource: string;
  major: number;
  minor: number;
  patch: number;
}

export type Layout = 'A' | 'B';

export interface WebhookEventBase<T extends string, D> {
  id: string;
  type: T;
  source: string;
  /** The RFC 3339 time as sent, or null when the event had none. */
  time: string | null;
  layout: Layout;
  dataschema: string | null;
  schemaVersion: SchemaVersion | null;
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

export type AnyWebhookEvent = WebhookEvent | UnknownWebhookEvent;
