// Which issues a dead letter belongs to: the whole event's, or, when the letter keeps each handler's
// state (issue 30), one per handler that did not succeed, each by that handler's own error.
import { issueKey, issueRefsOf, issueTally } from '../lib/inbox/inbox-issue';

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
