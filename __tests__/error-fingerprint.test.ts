// An issue groups dead letters by their error's fingerprint: what varies per event (ids, numbers,
// UUIDs, timestamps, quoted values) is masked, so one fault is one issue, and two faults are two.
import { errorFingerprint } from '../lib/inbox/inbox-issue';

describe('errorFingerprint', () => {
  it.each([
    ['Error: timeout after 5012 ms for ap_123', 'Error: timeout after 5301 ms for ap_9'],
    ["TypeError: no user 'ana@example.com'", 'TypeError: no user "bo@example.org"'],
    [
      'Error: record 7c9e6679-7425-40de-944b-e07fc1f90ae7 not found',
      'Error: record 16fd2706-8baf-433b-82eb-8c7fada847da not found',
    ],
    ['Error: stale since 2026-11-20T10:00:00.123Z', 'Error: stale since 2026-11-21T23:59:01Z'],
    ['Error: GET /v1/users/123 returned 503', 'Error: GET /v1/users/98765 returned 500'],
    ['Error: connect ECONNREFUSED 127.0.0.1:6379', 'Error: connect ECONNREFUSED 10.1.2.3:6380'],
    ['Error: hid_org evt01HXYZ failed', 'Error: hid_org evt02ABCD failed'],
    ['Error:   spaced\n  out 1', 'Error: spaced out 2'],
  ])('%j and %j are one fingerprint', (a, b) => {
    expect(errorFingerprint(a)).toEqual(errorFingerprint(b));
  });

  it.each([
    ['Error: timeout after 5012 ms for ap_123', 'Error: refused after 5012 ms for ap_123'],
    ['TypeError: x is not a function', 'RangeError: x is not a function'],
    ['Error: the CRM is down', 'Error: the ERP is down'],
    ['Error: ag.access_pass.issued failed', 'Error: ag.hid_org.created failed'],
  ])('%j and %j are two', (a, b) => {
    expect(errorFingerprint(a)).not.toEqual(errorFingerprint(b));
  });

  it.each([
    ['Error: timeout after 5012 ms for ap_123', { name: 'Error', message: 'timeout after <n> ms for <id>' }],
    [
      "TypeError: Cannot read properties of undefined (reading 'name')",
      { name: 'TypeError', message: 'Cannot read properties of undefined (reading <value>)' },
    ],
    [
      'Error: at 2026-11-20 for 7c9e6679-7425-40de-944b-e07fc1f90ae7',
      { name: 'Error', message: 'at <time> for <uuid>' },
    ],
    [
      'job stalled more than allowable limit',
      { name: 'Error', message: 'job stalled more than allowable limit' },
    ],
    [
      'a handler threw a string, not an Error',
      { name: 'Error', message: 'a handler threw a string, not an Error' },
    ],
    [null, { name: 'Error', message: '(no message)' }],
    ['', { name: 'Error', message: '(no message)' }],
  ])('%j reads as %j', (given, expected) => {
    expect(errorFingerprint(given)).toEqual(expected);
  });

  it('bounds the message it keeps', () => {
    expect(errorFingerprint(`Error: ${'word '.repeat(1000)}`).message.length).toBeLessThanOrEqual(300);
  });
});
