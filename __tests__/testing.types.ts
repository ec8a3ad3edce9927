// Compile-only: `npm run typecheck` checks this file; jest never runs it. Each @ts-expect-error is a
// mistake the test kit must refuse at compile time: if it compiled, the directive itself is an error.
import type { EventType } from 'service-webhooks';
import {
  buildEvent,
  buildUnknownEvent,
  deliverEvent,
  sendEvent,
  sendHandshake,
  type DeliveryEnvelope,
  type DeliveryResponse,
  type DeliveryTest,
  type LayoutAOverrides,
  type LayoutBOverrides,
} from 'service-webhooks/testing';
import express from 'express';
import type { Response as SupertestResponse, Test as SupertestTest } from 'supertest';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_proof: T): void => undefined;
const app = express();

// The type is checked against the catalogue, and carried into the envelope.
// @ts-expect-error a misspelled type
buildEvent('ag.access_pass.isued');
// @ts-expect-error a type the catalogue does not have
buildEvent('ag.access_pass.transferred');
// @ts-expect-error the same check when sending
void deliverEvent(app, 'ag.acess_pass.issued');
const _issued = buildEvent('ag.access_pass.issued');
expectType<Equal<typeof _issued, DeliveryEnvelope<'ag.access_pass.issued'>>>(true);
expectType<Equal<typeof _issued.type, 'ag.access_pass.issued'>>(true);
declare const _anyType: EventType;
expectType<Equal<ReturnType<typeof buildEvent<typeof _anyType>>['type'], EventType>>(true);

// Layout A data is overridden in layout A's names, with layout A's value types.
buildEvent('ag.access_pass.issued', {
  full_name: 'Grace Hopper',
  details: { card_number: '100234' },
  hid_org_id: null,
  tag_id: undefined,
});
// @ts-expect-error a misspelled field
buildEvent('ag.access_pass.issued', { full_nam: 'Grace Hopper' });
// @ts-expect-error a layout B name in layout A (the default)
buildEvent('ag.access_pass.issued', { access_pass_id: 'ap_1' });
// @ts-expect-error a layout B name in an explicit layout A
buildEvent('ag.access_pass.issued', { access_pass_id: 'ap_1' }, { layout: 'A' });
// @ts-expect-error money is a number
buildEvent('ag.account_balance.low', { current_balance: '42.50' });
// @ts-expect-error a misspelled field inside details
buildEvent('ag.access_pass.issued', { details: { card_numbr: '1' } });

// Layout B data is overridden in layout B's names.
buildEvent('ag.access_pass.devices.added', { access_pass_id: 'ap_1', device: { id: 'd' } }, { layout: 'B' });
buildEvent('ag.access_pass.issued', { site_code: 69, card_number: '100234' }, { layout: 'B' });
// @ts-expect-error a layout A name in layout B
buildEvent('ag.access_pass.devices.added', { devices: [] }, { layout: 'B' });
// @ts-expect-error a misspelled layout B field, when sending
void deliverEvent(app, 'ag.access_pass.issued', { acess_pass_id: 'ap_1' }, { layout: 'B', token: 't' });
// @ts-expect-error a layout that does not exist
buildEvent('ag.hid_org.created', {}, { layout: 'C' });
// @ts-expect-error a misspelled option
buildEvent('ag.hid_org.created', {}, { layot: 'B' });
// @ts-expect-error a misspelled send option
void deliverEvent(app, 'ag.hid_org.created', {}, { tokn: 't' });

// A layout only known at run time (a table over both) takes the fields of either.
declare const layout: 'A' | 'B';
buildEvent('ag.hid_org.created', {}, { layout });
void deliverEvent(app, 'ag.hid_org.created', { hid_org_id: 'h' }, { layout, token: 't' });

// Overrides are the type's own fields (spec 2.2, 2.4): another family's field is an error.
// @ts-expect-error an access pass event carries no balance (issue 22)
void deliverEvent(app, 'ag.access_pass.issued', { current_balance: 5 });
// @ts-expect-error issued carries details, not devices (rule 2)
buildEvent('ag.access_pass.issued', { devices: [] });
// @ts-expect-error only issued carries details (rule 2)
buildEvent('ag.access_pass.updated', { details: { card_number: '1' } });
// @ts-expect-error a card template has no devices
buildEvent('ag.card_template.created', { devices: [] });
// @ts-expect-error an account balance has no holder
buildEvent('ag.account_balance.low', { full_name: 'Ada' });
// @ts-expect-error an HID org names no organization (spec 2.2 gives organization_name to balances)
buildEvent('ag.hid_org.created', { organization_name: 'Acme' });
// @ts-expect-error only attached_to_template names a template
buildEvent('ag.landing_page.created', { card_template_id: 'ct_1' });
// @ts-expect-error the webhook family's data is not shown (rule 8): extras take buildUnknownEvent
buildEvent('ag.webhook.cert_expiring', { expires_at: '2027-01-01T00:00:00Z' });
// @ts-expect-error layout B: only device events carry a device
buildEvent('ag.access_pass.updated', { device: { id: 'd' } }, { layout: 'B' });
// @ts-expect-error layout B: a card template has no pass id
buildEvent('ag.card_template.created', { access_pass_id: 'ap_1' }, { layout: 'B' });
// @ts-expect-error layout B carries no holder (spec 2.4)
buildEvent('ag.access_pass.issued', { full_name: 'Ada' }, { layout: 'B' });
// @ts-expect-error layout B has no hid_org_id
void deliverEvent(app, 'ag.hid_org.created', { hid_org_id: 'h' }, { layout: 'B' });
buildEvent('ag.account_balance.low', { current_balance: 5, threshold: 10, metadata: { team: 'ops' } });
buildEvent('ag.card_template.created', { card_template_id: 'ct_1', protocol: 'seos', hid_org_id: 'h' });
buildEvent('ag.landing_page.attached_to_template', { landing_page_id: 'lp_1', card_template_id: 'ct_1' });
buildEvent('ag.credential_profile.created', { credential_profile_id: 'cp_1', protocol: 'desfire' });
buildEvent('ag.access_pass.updated', { devices: [{ id: 'd' }], state: 'suspended' });
buildEvent('ag.access_pass.updated', { card_number: '7', site_code: 69 }, { layout: 'B' });
buildEvent('ag.account_balance.low', { account_id: 'a', current_balance: 1 }, { layout: 'B' });
void deliverEvent(app, 'ag.card_template_pair.created', { card_templates: [], card_template_id: 'ct_1' });

// Overrides kept in a variable are checked where they are declared; the type narrows them.
const overrides: LayoutAOverrides<'ag.hid_org.created'> = { hid_org_id: 'h' };
buildEvent('ag.hid_org.created', overrides);
// @ts-expect-error an HID org's overrides have no holder
const _holder: LayoutAOverrides<'ag.hid_org.created'> = { full_name: 'Ada' };
const _anyFamily: LayoutAOverrides = { organization_name: 'Acme', full_name: 'Ada' };
const _layoutB: LayoutBOverrides<'ag.access_pass.devices.added'> = { device: { id: 'd' } };

// The escape hatch builds what the catalogue does not know yet, and says so in its type.
const _future = buildUnknownEvent('ag.access_pass.transferred', { region: 'eu-1', current_balance: '1' });
expectType<Equal<typeof _future.type, string>>(true);
buildUnknownEvent('ag.hid_org.created', { unknown_field: true }, { layout: 'B' });

// The test kit types supertest structurally (its .d.ts needs no supertest types, issue 19 item 3), yet
// what it returns is supertest's: supertest's Test and Response fit the shapes, so the cast inside is honest.
declare const _supertestTest: SupertestTest;
const _fits: DeliveryTest = _supertestTest;
declare const _supertestResponse: SupertestResponse;
const _responseFits: DeliveryResponse = _supertestResponse;
// A checker a supertest suite already has, typed for supertest's Response, can be passed to .expect().
const _checkStatus = (res: SupertestResponse): void => void res.status;
void sendHandshake(app).expect(_checkStatus).expect(200, { challenge: 'c' }).expect('content-type', /json/);
// Awaited: the response, its body as supertest types it (any), its headers.
void (async () => {
  const res = await sendEvent(app, buildEvent('ag.hid_org.created')).set('X-Extra', '1').expect(200);
  expectType<Equal<typeof res, DeliveryResponse>>(true);
  const _status: string = res.body.status;
  const _type: string | undefined = res.headers['content-type'];
})();
// @ts-expect-error a status is a number
void sendEvent(app, buildEvent('ag.hid_org.created')).expect(true);
