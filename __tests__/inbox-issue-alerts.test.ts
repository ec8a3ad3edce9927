// onIssue is told of each change of an issue once across every worker of the queue: three workers
// (three inboxes, as three processes would have) share one queue; one's hook throws, one's never
// settles, and every event still runs. An issue opens, grows past 10, and resolves when replayed.
import { createEventRouter, type Inbox, type InboxWorker, type IssueAlert } from '../lib';
import { normalizeEvent } from '../lib/events/normalize-event';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { checkIssueAlerts, advanceLevels, levelOf } from '../lib/inbox/issue-watch';
import type { InboxIssue } from '../lib/inbox/inbox-issue';
import { queuedDelivery, type QueuedDelivery } from '../lib/inbox/queued-delivery';
import { buildEvent } from '../lib/testing';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually } from './support/inbox-engines';

function deliveryOf(id: string): QueuedDelivery {
  const envelope = buildEvent('ag.access_pass.issued', {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

const CHECK_MS = 200;
let queues = 0;

describeEachEngine('issue alerts across three workers on $name', (_engine, server) => {
  describe('one queue', () => {
    const opened: { close(): Promise<void> }[] = [];
    afterAll(async () => {
      for (const o of opened.reverse()) await o.close();
    });

    it('announces opened, grew past 10 and resolved once each; a throwing or hanging hook holds nothing', async () => {
      const name = `alerts-${process.pid}-${++queues}`;
      const alerts: { worker: number; alert: IssueAlert }[] = [];
      const fixed = new Set<string>();
      const runs: string[] = [];
      const router = createEventRouter().onAny((event) => {
        runs.push(event.id);
        if (!fixed.has(event.id))
          throw new Error(`the CRM timed out after ${runs.length * 31} ms for ${event.id}`);
      });
      const hooks = [
        (alert: IssueAlert) => void alerts.push({ worker: 0, alert }),
        (alert: IssueAlert) => {
          alerts.push({ worker: 1, alert });
          throw new Error('the alert channel is down');
        },
        (alert: IssueAlert) => {
          alerts.push({ worker: 2, alert });
          return new Promise(() => undefined); // never settles
        },
      ];
      const inboxes: Inbox[] = [];
      const workers: InboxWorker[] = [];
      for (const onIssue of hooks) {
        const inbox = server().inbox(name);
        inboxes.push(inbox);
        opened.push(inbox);
        const worker = await inbox.startWorker(router, {
          attempts: 1,
          logger: false,
          onIssue,
          issueCheckMs: CHECK_MS,
        });
        workers.push(worker);
        opened.push(worker);
      }
      const transitions = () => alerts.map((a) => `${a.alert.transition} ${a.alert.threshold}`);

      await inboxes[0]!.enqueue(deliveryOf('evt-1'));
      await eventually('the issue opens', () => transitions().includes('opened 1'), 20_000);
      for (let i = 2; i <= 12; i++) await inboxes[i % 3]!.enqueue(deliveryOf(`evt-${i}`));
      await eventually('it grows past 10', () => transitions().includes('grew 10'), 30_000);
      const [issue] = await inboxes[1]!.issues();
      expect(issue).toMatchObject({
        count: 12,
        error: { message: 'the CRM timed out after <n> ms for <id>' },
      });

      for (let i = 1; i <= 12; i++) fixed.add(`evt-${i}`);
      runs.length = 0;
      expect(await inboxes[2]!.replay({ issue: issue!.key })).toBe(12);
      await eventually('it resolves', () => transitions().includes('resolved 0'), 20_000);
      await eventually('the twelve run', () => new Set(runs).size === 12, 20_000);
      // Many more checks run by all three workers: none announces any change again.
      await new Promise((resolve) => setTimeout(resolve, CHECK_MS * 10));
      expect(transitions()).toEqual(['opened 1', 'grew 10', 'resolved 0']);
      expect(alerts.every((a) => a.alert.issue.key === issue!.key)).toBe(true);
      expect(runs.sort()).toEqual([...fixed].sort());
      expect((await inboxes[0]!.status()).dead).toBe(0);
    }, 120_000);
  });
});

describe('advanceLevels', () => {
  const issue = (key: string, count: number): InboxIssue => ({
    key,
    type: 'ag.access_pass.issued',
    handler: null,
    error: { name: 'Error', message: 'x' },
    count,
    firstSeen: new Date(0),
    lastSeen: new Date(0),
    sampleEventIds: [],
  });
  const steps = (counts: number[][]) => {
    let stored;
    const said: string[][] = [];
    for (const round of counts) {
      const { next, alerts } = advanceLevels(
        stored,
        round.map((n, i) => issue(`k${i}`, n)).filter((i) => i.count > 0),
        0,
      );
      stored = JSON.parse(JSON.stringify(next));
      said.push(alerts.map((a) => `${a.issue.key} ${a.transition} ${a.threshold}`));
    }
    return said;
  };

  it.each([
    [
      [[1], [5], [9]],
      [['k0 opened 1'], [], []],
    ],
    [
      [[1], [10], [11], [99], [100]],
      [['k0 opened 1'], ['k0 grew 10'], [], [], ['k0 grew 100']],
    ],
    [
      [[3], [1500]],
      [['k0 opened 1'], ['k0 grew 10', 'k0 grew 100', 'k0 grew 1000']],
    ],
    [[[12]], [['k0 opened 1', 'k0 grew 10']]],
    [
      [[15], [5], [15]],
      [['k0 opened 1', 'k0 grew 10'], [], []],
    ],
    [
      [
        [2, 0],
        [0, 1],
        [0, 0],
      ],
      [['k0 opened 1'], ['k1 opened 1', 'k0 resolved 0'], ['k1 resolved 0']],
    ],
    [
      [[1], [0], [1]],
      [['k0 opened 1'], ['k0 resolved 0'], ['k0 opened 1']],
    ],
  ])('counts %j announce %j', (counts, expected) => {
    expect(steps(counts)).toEqual(expected);
  });

  it.each([
    [0, 0],
    [1, 1],
    [9, 1],
    [10, 10],
    [999, 100],
    [1000, 1000],
  ])('levelOf(%i) is %i', (count, level) => expect(levelOf(count)).toBe(level));
});

describe('checkIssueAlerts', () => {
  it.each([
    [{ onIssue: 'https://hooks.slack.com/x' }, /inbox\.startWorker: onIssue must be a function/],
    [
      { onIssue: () => undefined, issueCheckMs: 50 },
      /issueCheckMs must be a whole number of milliseconds ≥ 100 \(got 50\)/,
    ],
    [{ onIssue: () => undefined, issueCheckMs: 1.5e3 + 0.5 }, /issueCheckMs must be a whole number/],
    [{ issueCheckMs: '15s' }, /issueCheckMs must be a whole number/],
  ])('refuses %p at start', (options, message) => {
    expect(() => checkIssueAlerts(options as never, 'inbox.startWorker')).toThrow(message);
  });

  it('is off without onIssue, and checks every 15 s by default', () => {
    expect(checkIssueAlerts({}, 'w')).toBeUndefined();
    expect(checkIssueAlerts(undefined, 'w')).toBeUndefined();
    expect(checkIssueAlerts({ onIssue: () => undefined }, 'w')?.everyMs).toBe(15_000);
  });
});
