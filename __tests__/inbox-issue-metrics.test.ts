// The dead-letter gauge by issue is bounded: the largest issues each a series, the rest summed as
// one `other`, however many issues there are; the open issues are counted in full.
import { Registry } from 'prom-client';
import type { Inbox } from '../lib';
import type { InboxIssue } from '../lib/inbox/inbox-issue';
import { inboxMetrics } from '../lib/metrics';
import { TOP_ISSUES } from '../lib/observability/inbox-metrics';

function issue(n: number, count: number): InboxIssue {
  return {
    key: `k${String(n).padStart(3, '0')}`,
    type: 'ag.access_pass.issued',
    handler: null,
    error: { name: 'Error', message: `fault ${n}` },
    count,
    firstSeen: new Date(0),
    lastSeen: new Date(n * 1000),
    sampleEventIds: [],
  };
}

/** An inbox of a queue whose dead letters make these issues (the engines' own are tested on them). */
function inboxWith(issues: InboxIssue[]): Inbox {
  const counts = Object.fromEntries(['waiting', 'delayed', 'active', 'dead'].map((k) => [k, 0]));
  const status = { ...counts, paused: false, oldestAgeMs: null, oldestDelayedAgeMs: null };
  return {
    name: 'q',
    engine: 'bullmq',
    status: async () => status,
    issues: async () => issues,
  } as unknown as Inbox;
}

const series = (text: string) =>
  text.split('\n').filter((l) => l.startsWith('service_webhooks_inbox_issue_dead_letters{'));

describe('the dead-letter gauge by issue', () => {
  it.each([
    [0, 0],
    [3, 3],
    [TOP_ISSUES, TOP_ISSUES],
    [TOP_ISSUES + 1, TOP_ISSUES + 1],
    [500, TOP_ISSUES + 1],
  ])('%i issues make %i series', async (issues, expected) => {
    const registry = new Registry();
    inboxMetrics({ inbox: inboxWith(Array.from({ length: issues }, (_, n) => issue(n, n + 1))), registry });
    const text = await registry.metrics();
    expect(series(text)).toHaveLength(expected);
    expect(text).toContain(`service_webhooks_inbox_issues_open{queue="q",engine="bullmq"} ${issues}`);
  });

  it('keeps the largest issues and sums the rest as other, every dead letter counted once', async () => {
    const issues = Array.from({ length: 25 }, (_, n) => issue(n, n + 1)); // counts 1..25
    const registry = new Registry();
    inboxMetrics({ inbox: inboxWith(issues), registry });
    const lines = series(await registry.metrics());
    const value = (l: string) => Number(l.split(' ').at(-1));
    expect(lines.filter((l) => l.includes('issue="k024"'))).toHaveLength(1);
    expect(lines.some((l) => l.includes('issue="k000"'))).toBe(false);
    const other = lines.find((l) => l.includes('issue="other"'))!;
    expect(value(other)).toBe(((1 + 15) * 15) / 2); // the 15 smallest: 1..15
    expect(lines.reduce((sum, l) => sum + value(l), 0)).toBe((25 * 26) / 2);
  });
});
