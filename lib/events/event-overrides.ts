import type { EventType } from './catalogue';
import type { CredentialDetails, Device, EventData, Metadata, Protocol } from './data-schemas';
import type { DataFieldOf, LayoutBFieldOf } from './family-fields';
import type { Layout } from './webhook-event';

/** Every layout A data field (spec 2.2), each optional. */
type LayoutAFields = {
  [K in Exclude<keyof EventData, 'details' | 'devices'>]?: EventData[K] | undefined;
} & {
  /** Sent on `ag.access_pass.issued`; the receiver reads a field left out as `null`. */
  details?: Partial<CredentialDetails> | null | undefined;
  /** Sent on every other access-pass event; device events carry exactly one. */
  devices?: Partial<Device>[] | null | undefined;
};

/** Every layout B data field (spec 2.4, the earlier flat layout), in layout B's own names. */
interface LayoutBFields {
  /** The access pass's id (layout A's `id`). */
  access_pass_id?: string | null | undefined;
  /** The card template's id. */
  card_template_id?: string | null | undefined;
  /** The landing page's id. */
  landing_page_id?: string | null | undefined;
  /** The credential profile's id. */
  credential_profile_id?: string | null | undefined;
  /** The account's id, on `ag.account_balance.low`. */
  account_id?: string | null | undefined;
  /** The account's organization, on `ag.account_balance.low`. */
  organization_name?: string | null | undefined;
  /** The balance now, on `ag.account_balance.low`. */
  current_balance?: number | null | undefined;
  /** The alert threshold, on `ag.account_balance.low`. */
  threshold?: number | null | undefined;
  /** How far the balance is below the threshold, on `ag.account_balance.low`. */
  amount_below_threshold?: number | null | undefined;
  /** The card template's credential protocol. */
  protocol?: Protocol | null | undefined;
  /** The card template's metadata. */
  metadata?: Metadata | null | undefined;
  /** Sent on device events: the affected device's kind and id. */
  device?:
    | {
        /** The kind of device. */
        type?: string | null | undefined;
        /** The device's id. */
        id?: string | null | undefined;
      }
    | null
    | undefined;
  /** A string on the wire; some senders send a number (site code `69`), which the receiver accepts. */
  card_number?: string | number | null | undefined;
  /** The credential's site code: a string, or a number as some senders send it. */
  site_code?: string | number | null | undefined;
  /** The credential's file data (layout A's `details.file_data`). */
  file_data?: string | null | undefined;
}

/**
 * Data fields of a layout A delivery of type `T` (spec 2.2: only its family's), each optional: a field
 * left out keeps the test kit's realistic default, one set to `undefined` is removed. A misspelled name
 * or another family's field is a compile error; to send a field the spec does not define, use
 * `buildUnknownEvent`. Without `T`, the fields of every type.
 */
export type LayoutAOverrides<T extends EventType = EventType> = Pick<LayoutAFields, DataFieldOf<T>>;

/** Data fields of a layout B delivery of type `T`, in layout B's own names. Without `T`, of every type. */
export type LayoutBOverrides<T extends EventType = EventType> = Pick<LayoutBFields, LayoutBFieldOf<T>>;

/** The data overrides of a layout and a type: the layout's own field names for the type, and only those. */
export type DataOverrides<L extends Layout = 'A', T extends EventType = EventType> = L extends 'B'
  ? LayoutBOverrides<T>
  : LayoutAOverrides<T>;
