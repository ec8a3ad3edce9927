import express from 'express';
import { EVENT_TYPES, createEventRouter, webhookReceiver, type EventType } from 'service-webhooks';
import { fieldsOf } from '../lib/events/check-data-fields';
import {
  buildEvent,
  buildUnknownEvent,
  deliverEvent,
  sendEvent,
  sendHandshake,
} from 'service-webhooks/testing';
import { createApp } from './fixtures/user-app';
import { parseBlocks, typeErrors } from './support/readme-blocks';

describe('the docs/testing.md example, as a user writes it', () => {
  // docs/testing.md:start
  // The token this app is built with in tests; the test kit sends it as the Service sends the real one.
  // logger: false keeps the expected refusals (the wrong-token test) out of jest's output.
  const token = 'test-token';
  const { app, passes } = createApp({ webhookToken: token, logger: false });

  test('a pass issuance is stored', async () => {
    await deliverEvent(
      app,
      'ag.access_pass.issued',
      { id: 'ap_1', full_name: 'Grace Hopper' },
      { token, path: '/webhooks' },
    )
      .expect(200)
      .expect((r) => expect(r.body.status).toBe('processed'));
    // Fields you leave out keep the test kit's realistic defaults: details.card_number is '100234'.
    expect(passes.get('ap_1')).toEqual({ holder: 'Grace Hopper', card: '100234' });
  });

  test('the earlier flat layout works too, and a redelivery is not processed twice', async () => {
    const event = buildEvent('ag.access_pass.devices.added', {}, { layout: 'B' });
    await sendEvent(app, event, { token, path: '/webhooks' }).expect(200);
    await sendEvent(app, event, { token, path: '/webhooks' }).expect(200, {
      id: event.id,
      type: event.type,
      status: 'duplicate',
    });
  });

  test('a wrong token is refused', async () => {
    await deliverEvent(app, 'ag.access_pass.issued', {}, { token: 'wrong', path: '/webhooks' }).expect(401);
  });

  test('the handshake is echoed', async () => {
    await sendHandshake(app, { path: '/webhooks', challenge: 'abc' }).expect(200, { challenge: 'abc' });
  });
  // docs/testing.md:end
});

describe('buildEvent', () => {
  const strict = express();
  strict.use(
    webhookReceiver({
      bearerTokens: ['t'],
      router: createEventRouter(),
      validation: 'strict',
      logger: false,
    }),
  );
  const cases = EVENT_TYPES.flatMap((type) => (['A', 'B'] as const).map((layout) => [type, layout] as const));

  it.each(cases)('builds %s in layout %s that a strict receiver accepts', async (type, layout) => {
    await deliverEvent(strict, type, {}, { token: 't', layout }).expect(200);
  });

  it('gives realistic defaults for each family', () => {
    const issued = buildEvent('ag.access_pass.issued');
    expect(issued).toMatchObject({
      specversion: '1.0',
      source: '/service/access-grid',
      datacontenttype: 'application/json',
    });
    expect(issued.dataschema).toBe('https://service.example/schemas/access_pass/v1.4.0.json');
    expect(buildEvent('ag.card_template.created').dataschema).toBe(
      'https://service.example/schemas/card_template/v2.1.0.json',
    );
    expect(issued.data.tag_id).toMatch(/^[0-9a-f]{14}$/);
    expect(Date.parse(issued.data.start_date as string)).not.toBeNaN();
    expect(issued.data.details).toMatchObject({ card_number: '100234', site_code: '69' });
    expect(issued.data).not.toHaveProperty('devices');
    expect(buildEvent('ag.access_pass.devices.added').data.devices).toHaveLength(1);
    expect(buildEvent('ag.account_balance.low').data).toMatchObject({
      current_balance: 42.5,
      threshold: 100,
      amount_below_threshold: 57.5,
    });
    const b = buildEvent('ag.access_pass.devices.added', {}, { layout: 'B' });
    expect(b.source).toBe('service');
    expect(b).not.toHaveProperty('dataschema');
    expect(b.data).toMatchObject({
      access_pass_id: 'ap_7d41b0e2',
      device: { id: 'dev_5c2e91aa', type: 'iphone' },
    });
  });

  it('gives a fresh id and time unless told, and applies overrides', () => {
    const [one, two] = [buildEvent('ag.hid_org.created'), buildEvent('ag.hid_org.created')];
    expect(one.id).not.toBe(two.id);
    expect(Math.abs(Date.parse(one.time) - Date.now())).toBeLessThan(5000);
    const fixed = buildEvent(
      'ag.hid_org.created',
      { hid_org_id: 'hid_9', metadata: undefined },
      { id: 'evt_1', time: '2026-01-02T03:04:05Z', origin: 'eu' },
    );
    expect(fixed).toMatchObject({ id: 'evt_1', time: '2026-01-02T03:04:05.000Z', source: '/service/eu' });
    expect(fixed.data).toEqual({ hid_org_id: 'hid_9' });
  });
});

describe('buildEvent checks the type; buildUnknownEvent builds what the catalogue does not know', () => {
  const unchecked = buildEvent as (type: string) => unknown;

  it.each([
    ['ag.access_pass.isued', 'ag.access_pass.issued'],
    ['ag.hid_org.create', 'ag.hid_org.created'],
  ])('refuses %s at run time too, as JavaScript callers write it, with a hint', (type, hint) => {
    expect(() => unchecked(type)).toThrow(
      new TypeError(
        `[service-webhooks] buildEvent: unknown event type "${type}"; did you mean "${hint}"? For a type the catalogue does not know yet, use buildUnknownEvent.`,
      ),
    );
  });

  it('builds a future type and unknown fields, and a strict receiver acknowledges it as unhandled', async () => {
    const event = buildUnknownEvent('ag.access_pass.transferred', { region: 'eu-1' });
    expect(event.type).toBe('ag.access_pass.transferred');
    // A known family still gets its realistic defaults under the new type.
    expect(event.data).toMatchObject({ id: 'ap_7d41b0e2', region: 'eu-1' });
    expect(buildUnknownEvent('com.example.other').data).toEqual({ metadata: {} });
    const app = express().use(
      webhookReceiver({ bearerTokens: ['t'], router: createEventRouter(), logger: false }),
    );
    await sendEvent(app, event, { token: 't' }).expect(200, {
      id: event.id,
      type: 'ag.access_pass.transferred',
      status: 'unhandled',
    });
  });

  it('builds exactly what buildEvent builds for a known type', () => {
    const options = { id: 'evt_same', time: '2026-01-02T03:04:05Z' };
    expect(buildUnknownEvent('ag.access_pass.issued', { full_name: 'X' }, options)).toEqual(
      buildEvent('ag.access_pass.issued', { full_name: 'X' }, options),
    );
  });
});

describe('buildEvent and deliverEvent refuse a field the type does not carry, at run time', () => {
  // As JavaScript callers write it: TypeScript refuses these at compile time (testing.types.ts).
  const build = buildEvent as (type: string, data?: unknown, options?: object) => unknown;
  const tail = '. To send a field the spec does not define, use buildUnknownEvent.';

  it.each<[string, EventType, 'A' | 'B', Record<string, unknown>, string]>([
    [
      'a misspelling, with a hint',
      'ag.access_pass.issued',
      'A',
      { full_nam: 'Ada' },
      'ag.access_pass.issued in layout A has no field "full_nam"; did you mean "full_name"?',
    ],
    [
      'a misspelled layout B name',
      'ag.access_pass.issued',
      'B',
      { acess_pass_id: 'ap_1' },
      'ag.access_pass.issued in layout B has no field "acess_pass_id"; did you mean "access_pass_id"?',
    ],
    [
      'a layout A name in layout B, naming the layout B one',
      'ag.access_pass.updated',
      'B',
      { id: 'ap_1' },
      'ag.access_pass.updated in layout B has no field "id"; layout B calls it "access_pass_id"',
    ],
    [
      'devices in layout B',
      'ag.access_pass.devices.added',
      'B',
      { devices: [] },
      'ag.access_pass.devices.added in layout B has no field "devices"; layout B calls it "device"',
    ],
    [
      'details in layout B, naming the flat fields',
      'ag.access_pass.issued',
      'B',
      { details: {} },
      'ag.access_pass.issued in layout B has no field "details"; layout B calls it "card_number", "site_code", "file_data"',
    ],
    [
      'a layout B name in layout A',
      'ag.access_pass.issued',
      'A',
      { card_number: '1' },
      'ag.access_pass.issued in layout A has no field "card_number"; layout A calls it "details.card_number"',
    ],
    [
      "another family's field (issue 22)",
      'ag.access_pass.issued',
      'A',
      { current_balance: 5 },
      'ag.access_pass.issued in layout A has no field "current_balance": layout A gives it to account_balance events',
    ],
    [
      'a field only some types of another family carry',
      'ag.landing_page.created',
      'A',
      { card_template_id: 'ct_1' },
      'ag.landing_page.created in layout A has no field "card_template_id": layout A gives it to access_pass events, card_template events, card_template_pair events, ag.landing_page.attached_to_template, ag.credential_profile.attached_to_template',
    ],
    [
      'devices on issued (rule 2)',
      'ag.access_pass.issued',
      'A',
      { devices: [] },
      'ag.access_pass.issued in layout A has no field "devices": spec 6 rule 2 puts details on ag.access_pass.issued only, devices on every other access pass event',
    ],
    [
      'a layout A field layout B does not carry',
      'ag.access_pass.issued',
      'B',
      { full_name: 'Ada' },
      'ag.access_pass.issued in layout B has no field "full_name": layout B (spec 2.4) does not carry it; in layout B this event carries card_template_id, protocol, metadata, access_pass_id, card_number, site_code, file_data',
    ],
    [
      'a device on a layout B event that is not a device event',
      'ag.access_pass.updated',
      'B',
      { device: { id: 'd' } },
      'ag.access_pass.updated in layout B has no field "device": layout B gives it to ag.access_pass.devices.added, ag.access_pass.devices.suspended, ag.access_pass.devices.resumed',
    ],
    [
      'a field the spec does not define',
      'ag.hid_org.created',
      'A',
      { region: 'eu-1' },
      'ag.hid_org.created in layout A has no field "region"',
    ],
    [
      'a field set to undefined is still named',
      'ag.card_template.created',
      'A',
      { devices: undefined },
      'ag.card_template.created in layout A has no field "devices": layout A gives it to access_pass events except ag.access_pass.issued',
    ],
    [
      'a misspelling inside details (spec 2.3)',
      'ag.access_pass.issued',
      'A',
      { details: { card_numbr: '1' } },
      'ag.access_pass.issued in layout A has no field "details.card_numbr"; did you mean "details.card_number"?',
    ],
    [
      'a misspelling inside a device',
      'ag.access_pass.updated',
      'A',
      { devices: [{ id: 'd1' }, { idd: 'x' }] },
      'ag.access_pass.updated in layout A has no field "devices[1].idd"; did you mean "devices[1].id"?',
    ],
    [
      'a type on details (spec 2.3: details has none)',
      'ag.access_pass.issued',
      'A',
      { details: { type: 'iphone' } },
      'ag.access_pass.issued in layout A has no field "details.type": spec 2.3 gives devices a type, details none',
    ],
    [
      "a misspelling inside layout B's device",
      'ag.access_pass.devices.added',
      'B',
      { device: { tpe: 'x' } },
      'ag.access_pass.devices.added in layout B has no field "device.tpe"; did you mean "device.type"?',
    ],
    [
      'a field no device has, naming those it has',
      'ag.access_pass.devices.added',
      'B',
      { device: { serial: 'x' } },
      'ag.access_pass.devices.added in layout B has no field "device.serial": spec 2.4 names type, id',
    ],
    [
      'a __proto__ key, as JSON.parse makes one',
      'ag.access_pass.issued',
      'A',
      JSON.parse('{"__proto__": {"full_name": "x"}}') as Record<string, unknown>,
      'ag.access_pass.issued in layout A has no field "__proto__"',
    ],
  ])('refuses %s', (_name, type, layout, data, message) => {
    expect(() => build(type, data, { layout })).toThrow(
      new TypeError(`[service-webhooks] buildEvent: ${message}${tail}`),
    );
  });

  it('names deliverEvent when it is the caller, and sends nothing', () => {
    let requests = 0;
    const app = express().use((_req, res) => void (requests++, res.sendStatus(200)));
    const deliver = deliverEvent as (target: unknown, type: string, data: unknown) => unknown;
    expect(() => deliver(app, 'ag.account_balance.low', { full_name: 'Ada' })).toThrow(
      `[service-webhooks] deliverEvent: ag.account_balance.low in layout A has no field "full_name": layout A gives it to access_pass events${tail}`,
    );
    expect(requests).toBe(0);
  });

  it('refuses data that is not an object', () => {
    expect(() => build('ag.hid_org.created', ['hid_org_id'])).toThrow(
      '[service-webhooks] buildEvent: data must be an object of field overrides',
    );
  });

  it.each<[string, EventType, 'A' | 'B', Record<string, unknown>]>([
    ['anything inside metadata', 'ag.hid_org.created', 'A', { metadata: { region: 'eu-1', deep: { a: 1 } } }],
    ["each family's own fields", 'ag.card_template.created', 'A', { hid_org_id: 'h', protocol: 'seos' }],
    [
      'the template on attached_to_template',
      'ag.credential_profile.attached_to_template',
      'A',
      { card_template_id: 'ct_1' },
    ],
    ['the flat credential in layout B', 'ag.access_pass.updated', 'B', { card_number: '7', site_code: 69 }],
    ['a device on a layout B device event', 'ag.access_pass.devices.resumed', 'B', { device: { id: 'd' } }],
    [
      "every credential field in details and a device's type",
      'ag.access_pass.updated',
      'A',
      { devices: [{ id: 'd', type: 'watch', card_number: '1', site_code: '69', status: 'installed' }] },
    ],
    [
      'anything in a card_templates item (spec 2.3: not shown)',
      'ag.access_pass.renewed',
      'A',
      { card_templates: [{ id: 'ct', name: 'x' }] },
    ],
    ['a value of the wrong kind, left to the receiver', 'ag.access_pass.issued', 'A', { details: 'x' }],
  ])('accepts %s', (_name, type, layout, data) => {
    expect(() => build(type, data, { layout })).not.toThrow();
  });

  it('gives each access pass type the state it leaves the pass in, in spec 3 values (issue 22 item 5)', () => {
    const passTypes = EVENT_TYPES.filter((type) => type.startsWith('ag.access_pass.'));
    const states = Object.fromEntries(passTypes.map((type) => [type, buildEvent(type).data.state]));
    expect(states).toEqual({
      'ag.access_pass.issued': 'created',
      'ag.access_pass.activated': 'active',
      'ag.access_pass.updated': 'active',
      'ag.access_pass.suspended': 'suspended',
      'ag.access_pass.resumed': 'active',
      'ag.access_pass.unlinked': 'unlink',
      'ag.access_pass.deleted': 'deleted',
      'ag.access_pass.expired': 'suspended',
      'ag.access_pass.renewed': 'active',
      'ag.access_pass.failed': 'created',
      'ag.access_pass.devices.added': 'active',
      'ag.access_pass.devices.suspended': 'active',
      'ag.access_pass.devices.resumed': 'active',
    });
    const expired = buildEvent('ag.access_pass.expired').data;
    expect(Date.parse(expired.expiration_date as string)).toBeLessThan(
      Date.parse(buildEvent('ag.access_pass.expired').time),
    );
    const [suspended] = buildEvent('ag.access_pass.devices.suspended').data.devices as { status: string }[];
    expect(suspended?.status).toBe('suspended');
  });

  it('builds defaults with only the fields each type carries, in both layouts', () => {
    const extra = EVENT_TYPES.flatMap((type) =>
      (['A', 'B'] as const).flatMap((layout) =>
        Object.keys(buildEvent(type, {}, { layout }).data)
          .filter((field) => !fieldsOf(type, layout).includes(field))
          .map((field) => `${type} ${layout} ${field}`),
      ),
    );
    // The spec does not show cert_expiring's data (section 6 rule 8); the emulator's fields are extras.
    expect(extra.filter((line) => !line.startsWith('ag.webhook.'))).toEqual([]);
  });
});

describe('sendEvent and sendHandshake', () => {
  function recorder() {
    const seen: { headers: express.Request['headers']; body: string }[] = [];
    const target = express();
    target.use(express.text({ type: () => true }));
    target.post('/in', (req, res) => {
      seen.push({ headers: req.headers, body: req.body as string });
      res.sendStatus(200);
    });
    return { seen, target };
  }

  it('sends the exact headers of a delivery (spec 5.2)', async () => {
    const { seen, target } = recorder();
    const event = buildEvent('ag.hid_org.created');
    await sendEvent(target, event, { token: 'tok_1', path: '/in' }).expect(200);
    expect(seen[0]?.headers).toMatchObject({
      'content-type': 'application/cloudevents+json; charset=utf-8',
      'user-agent': 'Service-Webhooks/1.0',
      authorization: 'Bearer tok_1',
    });
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual(event);
  });

  it('sends no Authorization without a token, and a handshake with the challenge in header and body', async () => {
    const { seen, target } = recorder();
    await sendEvent(target, buildEvent('ag.hid_org.created'), { path: '/in' }).expect(200);
    await sendHandshake(target, { path: '/in', challenge: 'c1' }).expect(200);
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(seen[1]?.headers['x-service-webhook-challenge']).toBe('c1');
    expect(JSON.parse(seen[1]?.body ?? '')).toEqual({ challenge: 'c1' });
  });
});

describe('the test kit in a project with exactOptionalPropertyTypes', () => {
  it('takes options and overrides that may be undefined, as such projects pass them', () => {
    const [block] = parseBlocks(
      [
        '```ts',
        "import express from 'express';",
        "import { buildEvent, deliverEvent, sendHandshake } from 'service-webhooks/testing';",
        'declare const maybe: string | undefined;',
        "buildEvent('ag.hid_org.created', { hid_org_id: maybe }, { id: maybe, time: maybe, layout: undefined });",
        "buildEvent('ag.access_pass.issued', { access_pass_id: maybe }, { layout: 'B', origin: maybe });",
        "void deliverEvent(express(), 'ag.hid_org.created', {}, { token: maybe, path: maybe });",
        'void sendHandshake(express(), { challenge: maybe, token: maybe });',
        '```',
      ].join('\n'),
    );
    expect(typeErrors(block === undefined ? [] : [block]).get(block?.file ?? '')).toEqual([]);
  }, 120_000);

  it('treats an option set to undefined as left out', async () => {
    const event = buildEvent(
      'ag.hid_org.created',
      {},
      { id: undefined, layout: undefined, origin: undefined },
    );
    expect(event.source).toBe('/service/access-grid');
    const app = express().use(
      webhookReceiver({ bearerTokens: ['t'], router: createEventRouter(), logger: false }),
    );
    await deliverEvent(app, 'ag.hid_org.created', {}, { token: 't', path: undefined }).expect(200);
    await sendHandshake(app, { challenge: undefined }).expect(200);
  });
});
