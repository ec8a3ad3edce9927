import express from 'express';
import {
  createEventRouter,
  webhookReceiver,
  type EventType,
  type ValidationMode,
  type AnyWebhookEvent,
} from '../lib';
import { checkEventRules } from '../lib/events/event-rules';
import { buildUnknownEvent, deliverEvent, sendEvent } from '../lib/testing';
import { EVENT_DATA_FIELDS } from '../lib/events/data-schemas';
import { captureLogger } from './support/capture-logger';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS } from './support/doors';

const TOKEN = 'tok_rules';

function appWith(validation: ValidationMode) {
  const logger = captureLogger();
  const handled: string[] = [];
  const router = createEventRouter().onAny((event) => void handled.push(event.type));
  const app = express();
  app.use(webhookReceiver({ bearerTokens: [TOKEN], router, validation, logger, idempotency: false }));
  return { app, logger, handled };
}

// Breaking a rule takes the escape hatch: buildEvent refuses a field the type does not carry.
type Case = [string, EventType, 'A' | 'B', Record<string, unknown>, string, string];
const VIOLATIONS: Case[] = [
  ['issued without details', 'ag.access_pass.issued', 'A', { details: undefined }, 'rule 2', 'data.details'],
  ['issued with devices', 'ag.access_pass.issued', 'A', { devices: [] }, 'rule 2', 'data.devices'],
  [
    'issued (B) with a device',
    'ag.access_pass.issued',
    'B',
    { device: { id: 'd1', type: 'iphone' } },
    'rule 2',
    'data.devices',
  ],
  [
    'activated without devices',
    'ag.access_pass.activated',
    'A',
    { devices: undefined },
    'rule 2',
    'data.devices',
  ],
  [
    'updated with details',
    'ag.access_pass.updated',
    'A',
    { details: { id: 'c1' } },
    'rule 2',
    'data.details',
  ],
  [
    'device event with two devices',
    'ag.access_pass.devices.added',
    'A',
    { devices: [{ id: 'd1' }, { id: 'd2' }] },
    'rule 3',
    'data.devices',
  ],
  [
    'device event with no device',
    'ag.access_pass.devices.suspended',
    'A',
    { devices: [] },
    'rule 3',
    'data.devices',
  ],
  [
    'device event (B) without device',
    'ag.access_pass.devices.resumed',
    'B',
    { device: undefined },
    'rule 3',
    'data.device',
  ],
  [
    'card template without card_template_id',
    'ag.card_template.created',
    'A',
    { card_template_id: undefined },
    'rule 4',
    'data.card_template_id',
  ],
  [
    'card template without protocol',
    'ag.card_template.published',
    'B',
    { protocol: null },
    'rule 4',
    'data.protocol',
  ],
  [
    'card template without metadata',
    'ag.card_template.updated',
    'A',
    { metadata: undefined },
    'rule 4',
    'data.metadata',
  ],
  [
    'balance without account_id',
    'ag.account_balance.low',
    'A',
    { account_id: undefined },
    'rule 5',
    'data.account_id',
  ],
  [
    'balance without organization_name',
    'ag.account_balance.low',
    'B',
    { organization_name: null },
    'rule 5',
    'data.organization_name',
  ],
  [
    'balance without current_balance',
    'ag.account_balance.low',
    'A',
    { current_balance: undefined },
    'rule 5',
    'data.current_balance',
  ],
  [
    'balance without threshold',
    'ag.account_balance.low',
    'A',
    { threshold: null },
    'rule 5',
    'data.threshold',
  ],
  [
    'balance without amount_below_threshold',
    'ag.account_balance.low',
    'B',
    { amount_below_threshold: undefined },
    'rule 5',
    'data.amount_below_threshold',
  ],
];

describe('section 6 rules 2–5', () => {
  it.each(VIOLATIONS)('strict: %s → 400 naming the rule', async (_name, type, layout, data, rule, field) => {
    const { app, handled } = appWith('strict');
    const res = await sendEvent(app, buildUnknownEvent(type, data, { layout }), { token: TOKEN }).expect(400);
    expect(res.body.detail).toContain(rule);
    expect(res.body.field).toBe(field);
    expect(handled).toEqual([]);
  });

  it.each(VIOLATIONS)('lenient: %s → 200 and a logged warning', async (_name, type, layout, data, rule) => {
    const { app, handled, logger } = appWith('lenient');
    await sendEvent(app, buildUnknownEvent(type, data, { layout }), { token: TOKEN }).expect(200);
    expect(handled).toEqual([type]);
    const warning = logger.records.find((r) => r.level === 'warn');
    expect(warning?.message).toMatch(/validation is lenient/);
    expect(JSON.stringify(warning?.meta)).toContain(rule);
  });

  it.each<[string, EventType, 'A' | 'B', Record<string, unknown>]>([
    ['B access pass events carry no device list', 'ag.access_pass.updated', 'B', {}],
    [
      'card template pair is not held to rule 4',
      'ag.card_template_pair.created',
      'A',
      { protocol: undefined },
    ],
    ['a webhook event with empty data', 'ag.webhook.cert_expiring', 'A', { metadata: undefined }],
  ])('strict mode accepts what the rules allow: %s', async (_name, type, layout, data) => {
    const { app, handled, logger } = appWith('strict');
    await deliverEvent(app, type, data, { token: TOKEN, layout }).expect(200);
    expect(handled).toEqual([type]);
    expect(logger.messages('warn')).toEqual([]);
  });
});

describe.each(DOORS)('rules 2–5 bind only the types they name, through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it.each([
    ['ag.access_pass.transferred', { devices: undefined }],
    ['ag.card_template.archived', { protocol: undefined, metadata: undefined }],
    ['ag.account_balance.recovered', { threshold: undefined }],
  ])(
    'acknowledges a future %s in strict mode, through onAny, as rules 2–5 do not name it',
    async (type, data) => {
      const seen: AnyWebhookEvent[] = [];
      const router = createEventRouter().onAny((event) => void seen.push(event));
      const { d } = await start({ router, validation: 'strict' });
      const answer = await d.send(tokenDelivery(TOKEN, buildUnknownEvent(type, data)));
      expect([answer.status, JSON.parse(answer.text).status]).toEqual([200, 'unhandled']);
      expect(seen.map((e) => e.type)).toEqual([type]);
    },
  );
});

describe('checkEventRules on a run of types that changes', () => {
  // Every field null: each type's rules find what is missing, and a type no rule names finds nothing.
  const empty = Object.fromEntries(EVENT_DATA_FIELDS.map((field) => [field, null])) as never;
  const fieldsOf = (type: string) => checkEventRules(type, 'A', empty).map((v) => v.field);

  it('applies to each type its own rules, not the previous type’s', () => {
    const run: [string, string[]][] = [
      ['ag.access_pass.issued', ['data.details']],
      ['ag.access_pass.issued', ['data.details']],
      ['ag.card_template.created', ['data.card_template_id', 'data.protocol', 'data.metadata']],
      ['ag.card_template.archived', []],
      [
        'ag.account_balance.low',
        [
          'data.account_id',
          'data.organization_name',
          'data.current_balance',
          'data.threshold',
          'data.amount_below_threshold',
        ],
      ],
      ['ag.hid_org.created', []],
      ['ag.access_pass.devices.added', ['data.devices', 'data.devices']],
    ];
    expect(run.map(([type]) => fieldsOf(type))).toEqual(run.map(([, fields]) => fields));
  });
});
