import {
  familyOf,
  type AccessPassDeviceEventType,
  type AccessPassEventType,
  type EventFamily,
  type EventType,
} from './catalogue';
import { DATA_FIELD_FAMILIES, EVENT_DATA_FIELDS } from './data-schemas';

type FieldFamilies = typeof DATA_FIELD_FAMILIES;
/** The fields spec 2.2 names family `F` for (from {@link DATA_FIELD_FAMILIES}, the one list of them). */
type FamilyField<F extends string> = {
  [Field in keyof FieldFamilies]: F extends FieldFamilies[Field][number] ? Field : never;
}[keyof FieldFamilies];
type FamilyOf<T extends string> = T extends `ag.${infer F}.${string}` ? F : never;
/** `*.attached_to_template` names the template it attached to. */
type AttachedType = Extract<EventType, `${string}.attached_to_template`>;

/** The layout A data fields an event of type `T` carries (rule 2: `details` on issued, `devices` on the rest). */
export type DataFieldOf<T extends EventType> = T extends EventType
  ? | FamilyField<FamilyOf<T>>
    | (T extends 'ag.access_pass.issued' ? 'details' : T extends AccessPassEventType ? 'devices' : never)
    | (T extends AttachedType ? 'card_template_id' : never)
  : never;

/** Layout A fields that layout B carries under the same name (spec 2.4). */
export const LAYOUT_B_KEPT = [
  'card_template_id',
  'landing_page_id',
  'credential_profile_id',
  'account_id',
  'organization_name',
  'current_balance',
  'threshold',
  'amount_below_threshold',
  'protocol',
  'metadata',
] as const;

type LayoutBCredentialField = 'access_pass_id' | 'card_number' | 'site_code' | 'file_data';

/** The layout B data fields an event of type `T` carries: its layout A fields layout B keeps, and its own. */
export type LayoutBFieldOf<T extends EventType> = T extends EventType
  ? | Extract<DataFieldOf<T>, (typeof LAYOUT_B_KEPT)[number]>
    | (T extends AccessPassEventType ? LayoutBCredentialField : never)
    | (T extends AccessPassDeviceEventType ? 'device' : never)
  : never;

/** The layout A data fields of an event of `type` (run-time twin of {@link DataFieldOf}). */
export function dataFieldsOf(type: EventType): readonly string[] {
  const family = familyOf(type) as EventFamily;
  const fields: string[] = EVENT_DATA_FIELDS.filter((field) =>
    (DATA_FIELD_FAMILIES[field] as readonly EventFamily[]).includes(family),
  );
  if (type === 'ag.access_pass.issued') fields.push('details');
  else if (family === 'access_pass') fields.push('devices');
  if (type.endsWith('.attached_to_template')) fields.push('card_template_id');
  return fields;
}

/** The layout B data fields of an event of `type` (run-time twin of {@link LayoutBFieldOf}). */
export function layoutBFieldsOf(type: EventType): readonly string[] {
  const kept: readonly string[] = LAYOUT_B_KEPT;
  const fields = dataFieldsOf(type).filter((field) => kept.includes(field));
  if (familyOf(type) !== 'access_pass') return fields;
  fields.push('access_pass_id', 'card_number', 'site_code', 'file_data');
  if (type.startsWith('ag.access_pass.devices.')) fields.push('device');
  return fields;
}
