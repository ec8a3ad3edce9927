import { issueKey, issueRefsOf, issueTally, errorFingerprint } from '../lib/inbox/inbox-issue';

const type = 'ag.access_pass.issued';

describe('issueRefsOf', () => {
  it('groups a letter without per-handler state as the whole event', () => {
    const refs = issueRefsOf({ delivery: { type }, lastError: 'Error: timeout after 12 ms' });
    expect(refs).toEqual([
      {
        key: issueKey(type, null, { name: 'Error', message: 'timeout after <n> ms' }),
        handler: null,
        error: { name: 'Error', message: 'timeout after <n> ms' },
      },
    ]);
  });

  it('groups one issue per failing handler, by its own error, when the letter keeps their state', () => {
    const refs = issueRefsOf({
      delivery: { type },
      lastError: 'Error: crm down for ap_1',
      handlers: {
        audit: { ok: true, attempts: 1 },
        crm: { ok: false, attempts: 13, lastError: 'Error: crm down for ap_1' },
        mail: { ok: false, attempts: 13, lastError: 'TypeError: no address for user 7' },
        // A failing handler whose own error was not kept is grouped by the letter's.
        sms: { ok: false, attempts: 13 },
      },
    });
    expect(refs.map((r) => [r.handler, r.error.name, r.error.message])).toEqual([
      ['crm', 'Error', 'crm down for <id>'],
      ['mail', 'TypeError', 'no address for user <n>'],
      ['sms', 'Error', 'crm down for <id>'],
    ]);
    expect(new Set(refs.map((r) => r.key)).size).toBe(3);
    // A handler is part of the key: the same error in the whole event is another issue.
    expect(refs[0]!.key).not.toBe(
      issueRefsOf({ delivery: { type }, lastError: 'Error: crm down for ap_1' })[0]!.key,
    );
  });

  it('groups a letter whose handlers all succeeded as the whole event', () => {
    const refs = issueRefsOf({ delivery: { type }, lastError: 'Error: x', handlers: { a: { ok: true } } });
    expect(refs.map((r) => r.handler)).toEqual([null]);
  });

  it.each([
    ['the type', ['ag.hid_org.created', null, 'Error', 'x']],
    ['the handler', [type, 'crm', 'Error', 'x']],
    ['the class', [type, null, 'TypeError', 'x']],
    ['the message', [type, null, 'Error', 'y']],
  ] as const)('keys a different %s apart', (_what, [t, handler, name, message]) => {
    expect(issueKey(t, handler, { name, message })).not.toBe(
      issueKey(type, null, { name: 'Error', message: 'x' }),
    );
  });
});

describe('issueTally', () => {
  it('merges groups of one issue: counts added, first and last seen widened, samples newest first', () => {
    const tally = issueTally();
    const [ref] = issueRefsOf({ delivery: { type }, lastError: 'Error: x' });
    const at = (s: number) => new Date(Date.UTC(2026, 10, 20, 0, 0, s));
    tally.add(type, ref!, { count: 2, firstSeen: at(10), lastSeen: at(20), sampleEventIds: ['b', 'a'] });
    tally.add(type, ref!, { count: 3, firstSeen: at(5), lastSeen: at(30), sampleEventIds: ['e', 'd', 'c'] });
    tally.add(type, ref!, { count: 1, firstSeen: at(1), lastSeen: at(1), sampleEventIds: ['z'] });
    const [issue] = tally.list({ limit: 10 });
    expect(issue).toMatchObject({ count: 6, firstSeen: at(1), lastSeen: at(30) });
    expect(issue!.sampleEventIds).toEqual(['e', 'd', 'c', 'b', 'a']);
  });
});

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
    // A quarantined event's issue is its field: the same field at another index is the same issue.
    [
      'InvalidEventError: Event data field "data.readers.0.id" must be a string.',
      'InvalidEventError: Event data field "data.readers.12.id" must be a string.',
    ],
  ])('%j and %j are one fingerprint', (a, b) => {
    expect(errorFingerprint(a)).toEqual(errorFingerprint(b));
  });

  it.each([
    ['Error: timeout after 5012 ms for ap_123', 'Error: refused after 5012 ms for ap_123'],
    ['TypeError: x is not a function', 'RangeError: x is not a function'],
    ['Error: the CRM is down', 'Error: the ERP is down'],
    ['Error: ag.access_pass.issued failed', 'Error: ag.hid_org.created failed'],
    // Quarantined letters group by type and field path (issue 31): two fields are two issues.
    [
      'InvalidEventError: Event data field "data.current_balance" must be a number.',
      'InvalidEventError: Event data field "data.currency" must be a number.',
    ],
    [
      'InvalidEventError: CloudEvent attribute "time" must be a string.',
      'InvalidEventError: CloudEvent attribute "subject" must be a string.',
    ],
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
