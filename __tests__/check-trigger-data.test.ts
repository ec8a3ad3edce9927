import { checkTriggerData } from '../lib/cli/check-trigger-data';
import { UsageError } from '../lib/cli/cli-errors';
import { parseSets } from '../lib/cli/set-fields';
import type { EventType } from '../lib/events/catalogue';

const check =
  (type: EventType, layout: 'A' | 'B', ...sets: string[]) =>
  () =>
    checkTriggerData(type, layout, parseSets(type, layout, sets).data);

describe('trigger --set is checked as a receiver would read the event', () => {
  it.each<[string, EventType, 'A' | 'B', string[], RegExp]>([
    [
      'a balance that is not a number',
      'ag.account_balance.low',
      'A',
      ['data.current_balance=abc'],
      /"data\.current_balance" must be a number of dollars/,
    ],
    [
      'a tag id that is not 14 hex characters',
      'ag.access_pass.issued',
      'A',
      ['data.tag_id=xyz'],
      /"data\.tag_id" must be 7 bytes as 14 hex characters/,
    ],
    [
      'a date that is not a date',
      'ag.access_pass.issued',
      'A',
      ['data.start_date=tomorrow'],
      /"data\.start_date" must be an ISO 8601 date/,
    ],
    [
      'layout B: a site code that is an object',
      'ag.access_pass.issued',
      'B',
      ['data.site_code={"a":1}'],
      /"data\.site_code"/,
    ],
    [
      'an issued pass without its details (spec rule)',
      'ag.access_pass.issued',
      'A',
      ['data.details=null'],
      /must carry data\.details \(spec/,
    ],
  ])(
    'refuses %s before sending, with the field and what it must be',
    (_name, type, layout, sets, message) => {
      expect(check(type, layout, ...sets)).toThrow(UsageError);
      expect(check(type, layout, ...sets)).toThrow(message);
      expect(check(type, layout, ...sets)).toThrow(
        /a receiver would refuse this .* \(400\), so it was not sent/,
      );
    },
  );

  it.each<[EventType, 'A' | 'B', string[]]>([
    ['ag.account_balance.low', 'A', ['data.current_balance=12.5']],
    ['ag.access_pass.issued', 'A', ['data.full_name=Ada', 'data.metadata.team=red']],
    ['ag.access_pass.issued', 'B', ['data.site_code=69', 'data.access_pass_id=ap_1']],
    ['ag.card_template.published', 'B', []],
  ])('lets %s (layout %s) through with %j', (type, layout, sets) => {
    expect(check(type, layout, ...sets)).not.toThrow();
  });
});
