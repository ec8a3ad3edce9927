import type { z as Z } from 'zod';
import { zod } from '../lazy-zod';
import type { EventFamily } from './catalogue';

/** A value the spec enumerates, open to values it does not list yet (a new one must not cause retries). */
export type OpenEnum<Known extends string> = Known | (string & {});

/** An access pass's `state`: the values the spec lists, or one it adds later. */
export type AccessPassState = OpenEnum<'created' | 'active' | 'suspended' | 'unlink' | 'deleted'>;
/** A card template's credential `protocol`: the values the spec lists, or one it adds later. */
export type Protocol = OpenEnum<'desfire' | 'seos' | 'smart_tap'>;
/** Free-form metadata, passed through as sent. */
export type Metadata = Record<string, unknown>;

/** Builds the schemas: run once, the first time an event needs more than the fast path. */
function build() {
  const z = zod();
  const openEnum = <Known extends string>() => z.string() as unknown as Z.ZodType<OpenEnum<Known>>;
  /** Absent and null both become null: a field the event did not carry is null, never undefined. */
  const orNull = <T extends Z.ZodType>(schema: T) => schema.nullable().default(null);

  const text = orNull(z.string());
  const isoDate = orNull(
    z.union([z.iso.date(), z.iso.datetime({ offset: true, local: true })], {
      error: 'must be an ISO 8601 date',
    }),
  );
  const dollars = orNull(z.number({ error: 'must be a number of dollars' }));
  const protocol = orNull(openEnum<'desfire' | 'seos' | 'smart_tap'>());
  const metadata = orNull(z.record(z.string(), z.unknown(), { error: 'must be an object' }));
  const tagId = orNull(
    z.string().regex(/^[0-9a-fA-F]{14}$/, { error: 'must be 7 bytes as 14 hex characters' }),
  );

  /** Fields of `details` (issued credential) and of each device (spec 2.3). */
  const credentialShape = {
    id: text,
    card_template_id: text,
    platform: text,
    protocol,
    status: text,
    card_number: text,
    site_code: text,
    file_data: text,
  };
  const detailsSchema = z.looseObject(credentialShape);
  const deviceSchema = z.looseObject({ ...credentialShape, type: text });

  /** The canonical data object: layout A names, every field present, null where not carried. */
  const eventDataShape = {
    id: text,
    state: orNull(openEnum<'created' | 'active' | 'suspended' | 'unlink' | 'deleted'>()),
    full_name: text,
    employee_id: text,
    title: text,
    start_date: isoDate,
    expiration_date: isoDate,
    hid_org_id: text,
    apple_user_id: text,
    tag_id: tagId,
    card_template_id: text,
    landing_page_id: text,
    credential_profile_id: text,
    account_id: text,
    organization_name: text,
    current_balance: dollars,
    threshold: dollars,
    amount_below_threshold: dollars,
    protocol,
    metadata,
    card_templates: orNull(z.array(z.unknown(), { error: 'must be an array' })),
    details: orNull(detailsSchema),
    devices: orNull(z.array(deviceSchema, { error: 'must be an array of devices' })),
  };
  const eventDataSchema = z.looseObject(eventDataShape);

  /** Card numbers and site codes are strings on the wire, but a number (site code 69) is read as one. */
  const numberish = z.union([z.string(), z.number().transform(String)]).nullish();
  /** The earlier flat layout (spec 2.4): validated under its own names, then lifted into the canonical one. */
  const layoutBDataSchema = z.looseObject({
    access_pass_id: z.string().nullish(),
    device: z.looseObject({ type: z.string().nullish(), id: z.string().nullish() }).nullish(),
    card_number: numberish,
    site_code: numberish,
    file_data: z.string().nullish(),
  });
  return { credentialShape, eventDataShape, detailsSchema, deviceSchema, eventDataSchema, layoutBDataSchema };
}

type Built = ReturnType<typeof build>;
let built: Built | undefined;

/** The data schemas, built (and zod loaded) the first time they are asked for. */
export function dataSchemas(): Built {
  built ??= build();
  return built;
}

/**
 * Spec 2.2's table: every canonical data field, in the schema's order (a test checks they are its keys),
 * with the families whose events carry it ("a field is populated only for the event families named").
 * A field the spec names no family for goes where its meaning puts it: the holder, the dates and the tag
 * are the pass's; `protocol` the pass's, the template's and the profile's; `metadata` belongs to every
 * resource; `hid_org_id` ("only for SEOS templates") to passes, templates and HID orgs. `details` and
 * `devices` go by type, not family (rule 2), so `family-fields.ts` adds them.
 */
export const DATA_FIELD_FAMILIES = {
  id: ['access_pass'],
  state: ['access_pass'],
  full_name: ['access_pass'],
  employee_id: ['access_pass'],
  title: ['access_pass'],
  start_date: ['access_pass'],
  expiration_date: ['access_pass'],
  hid_org_id: ['access_pass', 'card_template', 'hid_org'],
  apple_user_id: ['access_pass'],
  tag_id: ['access_pass'],
  card_template_id: ['access_pass', 'card_template', 'card_template_pair'],
  landing_page_id: ['landing_page'],
  credential_profile_id: ['credential_profile'],
  account_id: ['account_balance'],
  organization_name: ['account_balance'],
  current_balance: ['account_balance'],
  threshold: ['account_balance'],
  amount_below_threshold: ['account_balance'],
  protocol: ['access_pass', 'card_template', 'card_template_pair', 'credential_profile'],
  metadata: [
    'access_pass',
    'card_template',
    'card_template_pair',
    'landing_page',
    'credential_profile',
    'hid_org',
    'account_balance',
    'webhook',
  ],
  card_templates: ['access_pass', 'card_template_pair'],
  details: [],
  devices: [],
} as const satisfies { readonly [Field in keyof EventData]: readonly EventFamily[] };

/** The canonical data's field names, in the schema's order. */
export const EVENT_DATA_FIELDS = Object.keys(DATA_FIELD_FAMILIES) as readonly (keyof EventData)[];

/** Fields only layout B carries; their presence means layout B. */
export const LAYOUT_B_FIELDS = ['access_pass_id', 'device', 'card_number', 'site_code', 'file_data'] as const;
/** A credential's fields (spec 2.3): `details` carries these; a device carries them and its `type`. */
export const CREDENTIAL_FIELDS = [
  'id',
  'card_template_id',
  'platform',
  'protocol',
  'status',
  'card_number',
  'site_code',
  'file_data',
] as const;

/** Fields only layout A carries; their presence means layout A. */
export const LAYOUT_A_FIELDS = ['details', 'devices'] as const;

type Strict<Shape extends Z.ZodRawShape> = Z.output<Z.ZodObject<Shape>>;

/** A credential's details in layout A names (`card_number`, `site_code`, `file_data`, …); null where not carried. */
export type CredentialDetails = Strict<Built['credentialShape']>;
/** A device of an access pass: the credential details, plus its `type`. */
export type Device = CredentialDetails & {
  /** The kind of device (a phone's wallet, a watch), as sent; null when not carried. */
  type: string | null;
};
/**
 * Every data field of every family, in layout A names: what normalization produces at run time (a field
 * the event did not carry is `null`). A handler sees its type's part of it (`EventDataFor`).
 */
export type EventData = Strict<Built['eventDataShape']>;
