import { isEventType } from './catalogue';
import type { EventData } from './data-schemas';
import type { Layout } from './webhook-event';

/** One broken rule of spec section 6, rules 2–5. */
export interface RuleViolation {
  rule: string;
  field: string;
  message: string;
}

const CARD_TEMPLATE_FIELDS = ['card_template_id', 'protocol', 'metadata'] as const;
const BALANCE_FIELDS = [
  'account_id',
  'organization_name',
  'current_balance',
  'threshold',
  'amount_below_threshold',
] as const;

function missing(
  data: EventData,
  fields: readonly (keyof EventData)[],
  rule: string,
  type: string,
): RuleViolation[] {
  return fields
    .filter((field) => data[field] === null)
    .map((field) => ({ rule, field: `data.${field}`, message: `${type} must carry data.${field}` }));
}

function accessPassRules(type: string, layout: Layout, data: EventData): RuleViolation[] {
  const violations: RuleViolation[] = [];
  const rule2 = 'section 6 rule 2';
  if (type === 'ag.access_pass.issued') {
    if (layout === 'A' && data.details === null) {
      violations.push({ rule: rule2, field: 'data.details', message: `${type} must carry data.details` });
    }
    if (data.devices !== null) {
      violations.push({ rule: rule2, field: 'data.devices', message: `${type} must not carry devices` });
    }
    return violations;
  }
  if (layout === 'A') {
    if (data.devices === null) {
      violations.push({
        rule: rule2,
        field: 'data.devices',
        message: `${type} must carry data.devices (an array)`,
      });
    }
    if (data.details !== null) {
      violations.push({ rule: rule2, field: 'data.details', message: `${type} must not carry data.details` });
    }
  }
  if (type.startsWith('ag.access_pass.devices.') && data.devices?.length !== 1) {
    const field = layout === 'A' ? 'data.devices' : 'data.device';
    const got = data.devices === null ? 'none' : String(data.devices.length);
    violations.push({
      rule: 'section 6 rule 3',
      field,
      message: `${type} must carry exactly the affected device (got ${got})`,
    });
  }
  return violations;
}

/**
 * Checks the per-type promises of spec section 6, rules 2–5, on the normalized data. The rules name
 * the types they govern, so a type the catalogue does not know yet (`ag.access_pass.transferred`) is
 * bound by none: refusing it would start a 6-hour retry storm for an event nobody can fix.
 */
export function checkEventRules(type: string, layout: Layout, data: EventData): RuleViolation[] {
  switch (rulesOf(type)) {
    case 'access_pass':
      return accessPassRules(type, layout, data);
    case 'card_template':
      return missing(data, CARD_TEMPLATE_FIELDS, 'section 6 rule 4', type);
    case 'account_balance':
      return missing(data, BALANCE_FIELDS, 'section 6 rule 5', type);
    default:
      return [];
  }
}

type RuleFamily = 'access_pass' | 'card_template' | 'account_balance' | 'none';

/** The last type checked and the rules that bind it: a run of one type skips the lookups. */
let lastType: string | undefined;
let lastFamily: RuleFamily = 'none';

function rulesOf(type: string): RuleFamily {
  if (type !== lastType) {
    lastFamily = !isEventType(type)
      ? 'none'
      : type.startsWith('ag.access_pass.')
        ? 'access_pass'
        : type.startsWith('ag.card_template.')
          ? 'card_template'
          : type.startsWith('ag.account_balance.')
            ? 'account_balance'
            : 'none';
    lastType = type;
  }
  return lastFamily;
}
