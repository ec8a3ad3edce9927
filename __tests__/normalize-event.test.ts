import express from 'express';
import {
  createEventRouter,
  entityOf,
  EVENT_TYPES,
  parseSchemaVersion,
  webhookReceiver,
  type AnyWebhookEvent,
  type EventType,
} from '../lib';
import { EVENT_DATA_FIELDS, LAYOUT_B_FIELDS } from '../lib/events/data-schemas';
import { detectLayout, normalizeEvent } from '../lib/events/normalize-event';
import {
  buildEvent,
  buildUnknownEvent,
  deliverEvent,
  sendEvent,
  type DeliveryEnvelope,
} from '../lib/testing';

const TOKEN = 'tok_norm';

function recordingApp() {
  const received: { registeredFor: EventType; event: AnyWebhookEvent }[] = [];
  const router = createEventRouter();
  for (const type of EVENT_TYPES)
    router.on(type, (event) => void received.push({ registeredFor: type, event }));
  const app = express();
  app.use(webhookReceiver({ bearerTokens: [TOKEN], router, logger: false, idempotency: false }));
  return { app, received };
}

const ACCESS_PASS_TYPES = EVENT_TYPES.filter((t) => t.startsWith('ag.access_pass.'));

describe('every event type in both layouts', () => {
  const cases = EVENT_TYPES.flatMap((type) => (['A', 'B'] as const).map((layout) => [type, layout] as const));
  it.each(cases)('%s in layout %s reaches exactly its handler, normalized', async (type, layout) => {
    const { app, received } = recordingApp();
    const envelope = buildEvent(type, {}, { layout });
    const res = await sendEvent(app, envelope, { token: TOKEN }).expect(200);
    expect(res.body).toEqual({ id: envelope.id, type, status: 'processed' });
    expect(received).toHaveLength(1);
    const [{ registeredFor, event }] = received as [(typeof received)[number]];
    expect(registeredFor).toBe(type);
    expect(event).toMatchObject({
      id: envelope.id,
      type,
      source: envelope.source,
      time: envelope.time,
      layout,
    });
    expect(event.raw).toEqual(envelope);
    for (const field of EVENT_DATA_FIELDS) expect(event.data).toHaveProperty(field);
    for (const value of Object.values(event.data)) expect(value).not.toBeUndefined();
    if (layout === 'A') {
      expect(event.dataschema).toBe(envelope.dataschema);
      expect(event.schemaVersion).toMatchObject({ resource: type.split('.')[1] });
    } else {
      expect(event.dataschema).toBeNull();
      expect(event.schemaVersion).toBeNull();
      expect(event.data).not.toHaveProperty('access_pass_id');
      expect(event.data).not.toHaveProperty('device');
    }
  });
});

describe('layout A and B normalize to the same data', () => {
  it.each(ACCESS_PASS_TYPES)('%s: equal on every field both layouts carry', async (type) => {
    const { app, received } = recordingApp();
    await deliverEvent(app, type, {}, { token: TOKEN, layout: 'A' }).expect(200);
    await deliverEvent(app, type, {}, { token: TOKEN, layout: 'B' }).expect(200);
    const [a, b] = received.map((r) => r.event.data) as unknown as [
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    // Layout B carries: the pass id, ids, protocol, metadata, device {type, id}, card_number/site_code/file_data.
    for (const field of ['id', 'card_template_id', 'protocol', 'metadata'])
      expect(b[field]).toEqual(a[field]);
    if (type === 'ag.access_pass.issued') {
      const pick = (d: unknown) => {
        const { card_number, site_code, file_data } = d as Record<string, unknown>;
        return { card_number, site_code, file_data };
      };
      expect(pick(b.details)).toEqual(pick(a.details));
      expect(b.devices).toBeNull();
    } else if (type.startsWith('ag.access_pass.devices.')) {
      const pick = (d: unknown) =>
        (d as Record<string, unknown>[]).map(({ id, type: kind }) => ({ id, type: kind }));
      expect(pick(b.devices)).toEqual(pick(a.devices));
      expect(b.devices).toHaveLength(1);
    }
    // Fields only layout A carries are null, never undefined, in B.
    for (const field of ['state', 'full_name', 'tag_id', 'start_date']) expect(b[field]).toBeNull();
  });

  it('lifts a B site code sent as a number to the canonical string', async () => {
    const { app, received } = recordingApp();
    await deliverEvent(app, 'ag.access_pass.issued', { site_code: 69 }, { token: TOKEN, layout: 'B' }).expect(
      200,
    );
    const data = received[0]?.event.data;
    expect(data && 'details' in data ? data.details : undefined).toMatchObject({ site_code: '69' });
  });

  it('keeps unknown extra data fields', async () => {
    const { app, received } = recordingApp();
    await sendEvent(app, buildUnknownEvent('ag.hid_org.created', { region: 'eu-1' }), {
      token: TOKEN,
    }).expect(200);
    expect(received[0]?.event.data).toMatchObject({ region: 'eu-1' });
  });

  it('accepts enumeration values the spec does not list yet', async () => {
    const { app, received } = recordingApp();
    await deliverEvent(
      app,
      'ag.access_pass.updated',
      { state: 'archived', protocol: 'nfc_v2' },
      { token: TOKEN },
    ).expect(200);
    expect(received[0]?.event.data).toMatchObject({ state: 'archived', protocol: 'nfc_v2' });
  });
});

describe('layout detection and data validation', () => {
  it.each(LAYOUT_B_FIELDS)(
    'reads data.%s alone as layout B, and as a contradiction with details',
    (field) => {
      const envelope = { source: '/service/x' };
      expect(detectLayout({ source: 'other' }, { [field]: 'v' })).toBe('B');
      expect(() => detectLayout(envelope, { [field]: 'v', details: {} })).toThrow(`data.${field} is present`);
    },
  );

  it('does not count a layout B field the data only inherits', () => {
    const data = Object.create({ device: { id: 'd' }, access_pass_id: 'p' }) as Record<string, unknown>;
    expect(detectLayout({ source: 'other' }, data)).toBe('A');
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>, RegExp]>([
    [
      'dataschema with access_pass_id',
      {},
      { access_pass_id: 'ap_1' },
      /dataschema is set.*data\.access_pass_id/,
    ],
    ['source "service" with dataschema', { source: 'service' }, {}, /source is "service"/],
    [
      'details with device',
      { source: 'service', dataschema: undefined },
      { device: { id: 'd', type: 't' } },
      /data\.details is present/,
    ],
  ])(
    'answers 400 to an envelope that contradicts itself: %s',
    async (_name, envelopeOverrides, dataOverrides, detail) => {
      const { app, received } = recordingApp();
      const envelope = {
        ...buildUnknownEvent('ag.access_pass.issued', dataOverrides),
        ...envelopeOverrides,
      } as Record<string, unknown>;
      if ('dataschema' in envelopeOverrides && envelopeOverrides.dataschema === undefined)
        delete envelope.dataschema;
      const res = await sendEvent(app, envelope, { token: TOKEN }).expect(400);
      expect(res.body.detail).toMatch(detail);
      expect(received).toHaveLength(0);
    },
  );

  it.each<[string, Record<string, unknown>, string, RegExp]>([
    ['tag_id of 13 hex characters', { tag_id: '04a1b2c3d4e5f' }, 'data.tag_id', /14 hex/],
    ['tag_id not hex', { tag_id: '04a1b2c3d4e5fz' }, 'data.tag_id', /14 hex/],
    ['a date that is not ISO 8601', { start_date: 'next monday' }, 'data.start_date', /ISO 8601/],
    ['metadata an array', { metadata: [1] }, 'data.metadata', /object/],
    ['a device without an object', { devices: ['dev_1'] }, 'data.devices[0]', /.+/],
    ['devices not an array', { devices: { id: 'x' } }, 'data.devices', /array/],
  ])('answers 400 naming the data field: %s', async (_name, data, field, rule) => {
    const { app, received } = recordingApp();
    const res = await deliverEvent(app, 'ag.access_pass.updated', data, { token: TOKEN }).expect(400);
    expect(res.body.field).toBe(field);
    expect(res.body.detail).toMatch(rule);
    expect(received).toHaveLength(0);
  });

  it('answers 400 when data is not an object', async () => {
    const { app, received } = recordingApp();
    const res = await sendEvent(
      app,
      { ...buildEvent('ag.hid_org.created'), data: 'hello' },
      { token: TOKEN },
    ).expect(400);
    expect(res.body.field).toBe('data');
    expect(received).toHaveLength(0);
  });

  it('treats money as numbers and refuses a balance sent as a string', async () => {
    const { app, received } = recordingApp();
    const res = await sendEvent(
      app,
      buildUnknownEvent('ag.account_balance.low', { current_balance: '42.50' }),
      { token: TOKEN },
    ).expect(400);
    expect(res.body.field).toBe('data.current_balance');
    expect(received).toHaveLength(0);
  });
});

describe('parseSchemaVersion', () => {
  it.each([
    [
      'https://s.example/schemas/access_pass/v1.4.0.json',
      { resource: 'access_pass', major: 1, minor: 4, patch: 0 },
    ],
    [
      'https://s.example/base/schemas/card_template/v12.0.31.json',
      { resource: 'card_template', major: 12, minor: 0, patch: 31 },
    ],
    ['https://s.example/schemas/access_pass/latest.json', null],
    ['https://s.example/schemas/access_pass/v1.4.json', null],
    [null, null],
  ])('%s → %p', (url, expected) => {
    expect(parseSchemaVersion(url)).toEqual(expected);
  });
});

describe('a dataschema of another form', () => {
  it('is accepted with schemaVersion null, and logged', async () => {
    const records: string[] = [];
    const seen: AnyWebhookEvent[] = [];
    const app = express();
    const logger = { info: (_meta: unknown, message: string) => void records.push(message) };
    app.use(
      webhookReceiver({
        bearerTokens: [TOKEN],
        router: createEventRouter().onAny((e) => void seen.push(e)),
        logger,
      }),
    );
    const envelope = {
      ...buildEvent('ag.hid_org.created'),
      dataschema: 'https://service.example/schemas/hid_org/latest',
    };
    await sendEvent(app, envelope, { token: TOKEN }).expect(200);
    expect(seen[0]).toMatchObject({ layout: 'A', dataschema: envelope.dataschema, schemaVersion: null });
    expect(records.some((m) => m.includes('schemaVersion is null'))).toBe(true);
  });
});

const normalized = (envelope: DeliveryEnvelope) =>
  normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);

/** The field that names each family's entity in layout A, and in layout B. */
const ENTITY_FIELDS: [prefix: string, kind: string, a: string, b: string][] = [
  ['ag.access_pass.', 'access_pass', 'id', 'access_pass_id'],
  ['ag.card_template.', 'card_template', 'card_template_id', 'card_template_id'],
  ['ag.landing_page.', 'landing_page', 'landing_page_id', 'landing_page_id'],
  ['ag.credential_profile.', 'credential_profile', 'credential_profile_id', 'credential_profile_id'],
  ['ag.account_balance.', 'account', 'account_id', 'account_id'],
];
const fieldsOf = (type: string) => ENTITY_FIELDS.find(([prefix]) => type.startsWith(prefix));

describe('event.entity', () => {
  it.each(EVENT_TYPES.flatMap((type) => (['A', 'B'] as const).map((layout) => [type, layout] as const)))(
    '%s in layout %s names the spec’s id field, or nothing',
    (type: EventType, layout) => {
      const fields = fieldsOf(type);
      const field = fields === undefined ? undefined : layout === 'A' ? fields[2] : fields[3];
      const envelope = buildEvent(type, (field === undefined ? {} : { [field]: 'ent_42' }) as never, {
        layout,
      });
      expect(normalized(envelope).entity).toEqual(
        fields === undefined ? null : { kind: fields[1], id: 'ent_42' },
      );
    },
  );

  it.each([
    ['a null id', { id: null }],
    ['an empty id', { id: '' }],
  ])('is null for an access-pass event with %s', (_name, data) => {
    expect(normalized(buildEvent('ag.access_pass.updated', data)).entity).toBeNull();
  });

  it('reads the pass for an access-pass event, not the template it also names', () => {
    const event = buildEvent('ag.access_pass.updated', { id: 'pass_1', card_template_id: 'tpl_1' });
    expect(normalized(event).entity).toEqual({ kind: 'access_pass', id: 'pass_1' });
  });

  it('counts a type the catalogue does not know yet in its family, and no other', () => {
    expect(entityOf('ag.access_pass.transferred', { id: 'p' } as never)).toEqual({
      kind: 'access_pass',
      id: 'p',
    });
    expect(entityOf('ag.card_template_pair.created', { card_template_id: 't' } as never)).toBeNull();
    expect(entityOf('other.access_pass.x', { id: 'p' } as never)).toBeNull();
  });
});

describe('what normalization remembers from one event to the next', () => {
  const ACCESS_PASS = 'https://s.example/schemas/access_pass/v1.4.0.json';
  const TEMPLATE = 'https://s.example/schemas/card_template/v2.0.7.json';
  const access = { resource: 'access_pass', major: 1, minor: 4, patch: 0 };
  const template = { resource: 'card_template', major: 2, minor: 0, patch: 7 };

  it('reads each dataschema of a run that changes, the remembered one replaced each time', () => {
    const run: [string | null, object | null][] = [
      [ACCESS_PASS, access],
      [ACCESS_PASS, access],
      [TEMPLATE, template],
      [ACCESS_PASS, access],
      ['https://s.example/schemas/access_pass/latest.json', null],
      [ACCESS_PASS, access],
      [null, null],
      [TEMPLATE, template],
    ];
    expect(run.map(([url]) => parseSchemaVersion(url))).toEqual(run.map(([, expected]) => expected));
  });

  it('gives each event its own schemaVersion: a handler changing one leaves the next event’s alone', () => {
    const first = parseSchemaVersion(ACCESS_PASS);
    if (first === null) throw new Error('expected a version');
    first.major = 99;
    const second = parseSchemaVersion(ACCESS_PASS);
    expect(second).toEqual(access);
    expect(second).not.toBe(first);
  });

  it('reads the entity of a run of types that changes', () => {
    const data = { id: 'pass_1', card_template_id: 'tpl_1', account_id: 'acct_1' } as never;
    const run: [string, object | null][] = [
      ['ag.access_pass.issued', { kind: 'access_pass', id: 'pass_1' }],
      ['ag.access_pass.issued', { kind: 'access_pass', id: 'pass_1' }],
      ['ag.card_template.created', { kind: 'card_template', id: 'tpl_1' }],
      ['ag.hid_org.created', null],
      ['ag.account_balance.low', { kind: 'account', id: 'acct_1' }],
      ['ag.access_pass.updated', { kind: 'access_pass', id: 'pass_1' }],
    ];
    expect(run.map(([type]) => entityOf(type, data))).toEqual(run.map(([, expected]) => expected));
  });
});
