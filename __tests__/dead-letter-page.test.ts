import type { DeadLetter } from '../lib';
import { deadLetterPage } from '../lib/inbox-console/dead-letter-page';
import type { PageFrame } from '../lib/inbox-console/page-layout';
import { issuedDelivery } from './support/dead-letters';

const FRAME: PageFrame = {
  title: 'Dead letter',
  base: '/ops',
  engine: 'bullmq',
  queue: 'webhooks',
  status: {
    paused: false,
    waiting: 0,
    delayed: 0,
    active: 0,
    dead: 1,
    oldestAgeMs: null,
    oldestDelayedAgeMs: null,
  },
  identity: 'ada@example.com',
  token: 'tok',
  loopbackOnly: false,
};

function letter(extra: Record<string, unknown> = {}): DeadLetter {
  return {
    delivery: issuedDelivery('evt_1', { id: 'pass_42' }),
    attempts: 3,
    lastError: 'Error: the CRM is down',
    receivedAt: new Date('2026-11-26T09:00:00Z'),
    failedAt: new Date('2026-11-26T09:30:00Z'),
    ...extra,
  } as DeadLetter;
}

describe("a dead letter's page", () => {
  it('shows the event pretty-printed, its entity, tries, times and Replay this; no handler table or reason when the inbox keeps none', () => {
    const html = deadLetterPage(FRAME, letter());
    expect(html).toContain('data-testid="entity">access_pass <code>pass_42</code>');
    expect(html).toContain('2026-11-26 09:30:00 UTC');
    expect(html).toContain('data-testid="replay-one"');
    expect(html).toMatch(
      /<pre data-testid="envelope" tabindex="0">\{\n {2}&quot;id&quot;: &quot;evt_1&quot;,\n/,
    );
    expect(html).not.toContain('data-testid="handlers"');
    expect(html).not.toContain('data-testid="reason"');
  });

  it("shows each handler's state, with Replay this handler for the failed ones only, and a quarantined event's reason", () => {
    const html = deadLetterPage(
      FRAME,
      letter({
        reason: 'invalid',
        handlers: {
          crmSync: { ok: false, attempts: 3, lastError: '<img src=x onerror=alert(1)>' },
          '<b>audit</b>': { ok: true, attempts: 1 },
        },
      }),
    );
    const rows = [...html.matchAll(/<tr data-testid="handler-state">(.*?)<\/tr>/gs)].map((m) => m[1] ?? '');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain(
      '<code>crmSync</code></td><td class="failed">failed</td><td class="num">3</td>',
    );
    expect(rows[0]).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(rows[0]).toContain('name="handler" value="crmSync"');
    expect(rows[1]).toContain('<code>&lt;b&gt;audit&lt;/b&gt;</code></td><td class="ok">succeeded</td>');
    expect(rows[1]).not.toContain('replay-handler');
    expect(html).toContain('data-testid="reason">quarantined: the event did not pass validation');
  });
});
