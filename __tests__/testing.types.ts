// Compile-only: `npm run typecheck` checks this file; jest never runs it. Each @ts-expect-error is a
// mistake the test kit must refuse at compile time: if it compiled, the directive itself is an error.
import type { EventType } from 'service-webhooks';
import {
  buildEvent,
  buildUnknownEvent,
  deliverEvent,
  type DeliveryEnvelope,
  type LayoutAOverrides,
} from 'service-webhooks/testing';
import express from 'express';

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

// Overrides kept in a variable are checked where they are declared.
const overrides: LayoutAOverrides = { organization_name: 'Acme' };
buildEvent('ag.hid_org.created', overrides);

// The escape hatch builds what the catalogue does not know yet, and says so in its type.
const _future = buildUnknownEvent('ag.access_pass.transferred', { region: 'eu-1', current_balance: '1' });
expectType<Equal<typeof _future.type, string>>(true);
buildUnknownEvent('ag.hid_org.created', { unknown_field: true }, { layout: 'B' });
