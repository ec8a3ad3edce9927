import type { Layout } from '../events/webhook-event';
import type { CredentialDetails, Device, EventData, Metadata, Protocol } from '../events/data-schemas';

/**
 * Data fields of a layout A delivery (spec 2.2), each optional: a field left out keeps the test kit's
 * realistic default, one set to `undefined` is removed. A misspelled name is a compile error; to send
 * a field the spec does not define, use `buildUnknownEvent`.
 */
export type LayoutAOverrides = {
  [K in Exclude<keyof EventData, 'details' | 'devices'>]?: EventData[K] | undefined;
} & {
  /** Sent on `ag.access_pass.issued`; the receiver reads a field left out as `null`. */
  details?: Partial<CredentialDetails> | null | undefined;
  /** Sent on every other access-pass event; device events carry exactly one. */
  devices?: Partial<Device>[] | null | undefined;
};

/** Data fields of a layout B delivery (spec 2.4, the earlier flat layout), in layout B's own names. */
export interface LayoutBOverrides {
  access_pass_id?: string | null | undefined;
  card_template_id?: string | null | undefined;
  landing_page_id?: string | null | undefined;
  credential_profile_id?: string | null | undefined;
  account_id?: string | null | undefined;
  organization_name?: string | null | undefined;
  current_balance?: number | null | undefined;
  threshold?: number | null | undefined;
  amount_below_threshold?: number | null | undefined;
  protocol?: Protocol | null | undefined;
  metadata?: Metadata | null | undefined;
  /** Sent on device events: the affected device's kind and id. */
  device?: { type?: string | null | undefined; id?: string | null | undefined } | null | undefined;
  /** A string on the wire; some senders send a number (site code `69`), which the receiver accepts. */
  card_number?: string | number | null | undefined;
  site_code?: string | number | null | undefined;
  file_data?: string | null | undefined;
}

/** The data overrides of a layout: its own field names, and only those. */
export type DataOverrides<L extends Layout = 'A'> = L extends 'B' ? LayoutBOverrides : LayoutAOverrides;
