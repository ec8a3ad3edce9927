import { UsageError } from '../lib/cli/cli-errors';
import { parseSets } from '../lib/cli/set-fields';
import { buildEvent } from '../lib/testing';

describe('trigger --set, in the test kit field names', () => {
  it.each<[string, 'A' | 'B', string[], Record<string, unknown>]>([
    ['a string', 'A', ['data.full_name=Ada'], { full_name: 'Ada' }],
    [
      'JSON values',
      'A',
      ['data.metadata={"level":3}', 'data.hid_org_id=null'],
      { metadata: { level: 3 }, hid_org_id: null },
    ],
    [
      'a nested field, the rest kept',
      'A',
      ['data.metadata.team=red'],
      { metadata: { department: 'research', team: 'red' } },
    ],
    [
      'a layout B name',
      'B',
      ['data.access_pass_id=ap_9', 'data.site_code=69'],
      { access_pass_id: 'ap_9', site_code: 69 },
    ],
    ['a value with =', 'A', ['data.title=a=b'], { title: 'a=b' }],
  ])('%s', (_name, layout, sets, data) => {
    expect(parseSets('ag.access_pass.issued', layout, sets)).toEqual({ data });
  });

  it('sets the event id with id=', () => {
    expect(parseSets('ag.hid_org.created', 'A', ['id=evt_1'])).toEqual({ data: {}, id: 'evt_1' });
  });

  it('builds the event the test kit builds with the same overrides', () => {
    const { data } = parseSets('ag.access_pass.issued', 'A', [
      'data.full_name=Ada',
      'data.metadata.team=red',
    ]);
    expect(buildEvent('ag.access_pass.issued', data).data).toMatchObject({
      full_name: 'Ada',
      metadata: { department: 'research', team: 'red' },
    });
  });

  it.each<['A' | 'B', string, RegExp]>([
    ['A', 'data.ful_name=Ada', /layout A has no field "ful_name"; did you mean "data\.full_name"\?/],
    ['B', 'data.id=x', /layout B has no field "id"; layout B calls it "data\.access_pass_id"/],
    [
      'A',
      'data.current_balance=1',
      /no field "current_balance": layout A gives it to account_balance events/,
    ],
    [
      'B',
      'data.full_name=Ada',
      /layout B has no field "full_name": layout B \(spec 2\.4\) does not carry it; in layout B this event carries data\.card_template_id, data\.protocol, data\.metadata, data\.access_pass_id, data\.card_number, data\.site_code, data\.file_data$/,
    ],
    [
      'A',
      'data.details.card_numbr=1',
      /^--set data\.details\.card_numbr: ag\.access_pass\.issued in layout A has no field "details\.card_numbr"; did you mean "data\.details\.card_number"\?$/,
    ],
    [
      'A',
      'data.details={"tpe":"x"}',
      /^--set data\.details: ag\.access_pass\.issued in layout A has no field "details\.tpe"/,
    ],
    ['A', 'data.metadata.__proto__.polluted=1', /"__proto__" is not a field name/],
    ['A', 'full_name=Ada', /did you mean "data\.full_name"\?/],
    ['A', 'data.=x', /set data fields as data\.<field>/],
    ['A', '=x', /--set takes path=value/],
    ['A', 'data.full_name', /--set takes path=value/],
  ])('layout %s refuses %j', (layout, set, message) => {
    expect(() => parseSets('ag.access_pass.issued', layout, [set])).toThrow(UsageError);
    expect(() => parseSets('ag.access_pass.issued', layout, [set])).toThrow(message);
  });

  it('checks the fields inside a device, and its objects holding anything stay open', () => {
    expect(() => parseSets('ag.access_pass.updated', 'A', ['data.devices.0.idd=x'])).toThrow(
      '--set data.devices.0.idd: ag.access_pass.updated in layout A has no field "devices.0.idd"; did you mean "data.devices.0.id"?',
    );
    expect(() => parseSets('ag.access_pass.devices.added', 'B', ['data.device.tpe=x'])).toThrow(
      /has no field "device\.tpe"; did you mean "data\.device\.type"\?/,
    );
    expect(
      parseSets('ag.access_pass.updated', 'A', ['data.devices.0.status=suspended']).data.devices,
    ).toEqual([expect.objectContaining({ id: 'dev_5c2e91aa', status: 'suspended' })]);
    expect(parseSets('ag.access_pass.issued', 'A', ['data.metadata.deep.x=1']).data.metadata).toEqual({
      department: 'research',
      deep: { x: 1 },
    });
  });
});
