// Dead letters grouped into issues on both engines: by type and error fingerprint (masked variants
// are one issue), newest first, read by the engine; replay({ issue }) puts back exactly that issue's
// letters, which then run once. What issues() and replay({ issue }) are given is checked alike.
import { createEventRouter, type Inbox, type InboxWorker } from '../lib';
import { normalizeEvent } from '../lib/events/normalize-event';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery, type QueuedDelivery } from '../lib/inbox/queued-delivery';
import { issueRefsOf } from '../lib/inbox/inbox-issue';
import { pgBossInbox } from '../lib/pg-boss';
import type { DeadLetterData } from '../lib/pg-boss/dead-letter-data';
import { loadPgBoss, type PgBoss } from '../lib/pg-boss/load-pg-boss';
import { buildEvent } from '../lib/testing';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually, pgBossEngine } from './support/inbox-engines';

type Type = 'ag.access_pass.issued' | 'ag.hid_org.created';

function deliveryOf(id: string, type: Type): QueuedDelivery {
  const envelope = buildEvent(type, {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

/** The error each event's handler throws while it fails: its id says which fault. */
function faultOf(id: string): Error {
  const n = Number(id.split('-').at(-1));
  if (id.startsWith('slow-')) return new Error(`timeout after ${5000 + n * 37} ms for ap_${n}`);
  return new TypeError(`cannot read 'pass_${n}' of undefined`);
}

let queues = 0;

describeEachEngine('issues on $name', (_engine, server) => {
  // Its own describe: its afterAll closes the worker before the engine's server stops.
  describe('eight dead letters', () => {
    let inbox: Inbox;
    let worker: InboxWorker | undefined;
    const fixed = new Set<string>();
    const runs: string[] = [];
    beforeAll(async () => {
      inbox = server().inbox(`issues-${process.pid}-${++queues}`);
      const router = createEventRouter().onAny((event) => {
        runs.push(event.id);
        if (!fixed.has(event.id)) throw faultOf(event.id);
      });
      worker = await inbox.startWorker(router, { attempts: 1, logger: false });
      // Four timeouts of one type, two of another type, two TypeErrors: three issues.
      const letters: [string, Type][] = [
        ['slow-1', 'ag.access_pass.issued'],
        ['slow-2', 'ag.access_pass.issued'],
        ['slow-3', 'ag.access_pass.issued'],
        ['slow-4', 'ag.access_pass.issued'],
        ['slow-5', 'ag.hid_org.created'],
        ['slow-6', 'ag.hid_org.created'],
        ['type-7', 'ag.access_pass.issued'],
        ['type-8', 'ag.access_pass.issued'],
      ];
      for (const [id, type] of letters) await inbox.enqueue(deliveryOf(id, type));
      await eventually('eight dead letters', async () => (await inbox.status()).dead === 8, 30_000);
    }, 60_000);
    afterAll(async () => {
      await worker?.close();
      await inbox?.close();
    });

    it('groups the dead letters by type and fingerprint, newest first', async () => {
      const issues = await inbox.issues();
      const seen = issues.map((i) => ({ type: i.type, handler: i.handler, error: i.error, count: i.count }));
      expect(seen).toHaveLength(3);
      expect(seen).toEqual(
        expect.arrayContaining([
          {
            type: 'ag.access_pass.issued',
            handler: 'onAny',
            error: { name: 'Error', message: 'timeout after <n> ms for <id>' },
            count: 4,
          },
          {
            type: 'ag.hid_org.created',
            handler: 'onAny',
            error: { name: 'Error', message: 'timeout after <n> ms for <id>' },
            count: 2,
          },
          {
            type: 'ag.access_pass.issued',
            handler: 'onAny',
            error: { name: 'TypeError', message: 'cannot read <value> of undefined' },
            count: 2,
          },
        ]),
      );
      for (const issue of issues) {
        expect(issue.firstSeen.getTime()).toBeLessThanOrEqual(issue.lastSeen.getTime());
        expect(issue.sampleEventIds).toHaveLength(issue.count);
        expect(issue.key).toMatch(/^[0-9a-f]{16}$/);
      }
      const times = issues.map((i) => i.lastSeen.getTime());
      expect(times).toEqual([...times].sort((a, b) => b - a));
      // The key is the one every engine and process computes from the letter.
      const four = issues.find((i) => i.count === 4)!;
      const [letter] = await inbox.deadLetters({ limit: 1, type: 'ag.access_pass.issued' });
      expect(issueRefsOf(letter!).map((r) => r.key)).toContain(
        issues.find((i) => i.sampleEventIds.includes(letter!.delivery.id))!.key,
      );
      expect(four.sampleEventIds.sort()).toEqual(['slow-1', 'slow-2', 'slow-3', 'slow-4']);
    });

    it('reads at most limit, and only issues seen since', async () => {
      expect(await inbox.issues({ limit: 1 })).toHaveLength(1);
      expect(await inbox.issues({ since: new Date(Date.now() + 60_000) })).toEqual([]);
      expect(await inbox.issues({ since: new Date(0) })).toHaveLength(3);
    });

    it.each([
      [{ limit: 0 }, /limit must be a whole number from 1 to 1000 \(got 0\)/],
      [{ limit: 1001 }, /limit must be a whole number from 1 to 1000/],
      [{ limit: '5' }, /limit must be a whole number/],
      [{ since: 'yesterday' }, /since must be a valid Date/],
      [{ sinse: new Date() }, /did you mean "since"/],
      [[], /takes \{ since\?, limit\? \} or nothing/],
    ])('refuses issues(%j)', async (query, message) => {
      await expect(inbox.issues(query as never)).rejects.toThrow(message);
    });

    it.each([
      [{ issue: '' }, /issue must be an issue's key/],
      [{ issue: 7 }, /issue must be an issue's key/],
      [{ isue: 'abc' }, /did you mean "issue"/],
    ])('refuses replay(%j), replaying nothing', async (target, message) => {
      await expect(inbox.replay(target as never)).rejects.toThrow(message);
      expect((await inbox.status()).dead).toBe(8);
    });

    it("replays exactly one issue's dead letters, which then run once each", async () => {
      const four = (await inbox.issues()).find((i) => i.count === 4)!;
      expect(await inbox.replay({ issue: 'no-such-issue' })).toBe(0);
      for (const id of four.sampleEventIds) fixed.add(id);
      runs.length = 0;
      expect(await inbox.replay({ issue: four.key })).toBe(4);
      await eventually('the four run', () => runs.length >= 4);
      const left = await inbox.issues();
      expect(left.map((i) => i.key)).not.toContain(four.key);
      expect(left.map((i) => i.count).sort()).toEqual([2, 2]);
      expect((await inbox.status()).dead).toBe(4);
      expect(runs.sort()).toEqual(['slow-1', 'slow-2', 'slow-3', 'slow-4']);
      // Once each: nothing runs again, and replaying the gone issue again moves nothing.
      expect(await inbox.replay({ issue: four.key })).toBe(0);
      expect((await inbox.status()).dead).toBe(4);
    });
  });
});

describeEachEngine(
  'issues of dead letters written before issues were, on $name',
  (_engine, server) => {
    let boss: PgBoss;
    let inbox: Inbox;
    const name = `legacy-${process.pid}`;
    beforeAll(async () => {
      boss = new (loadPgBoss().PgBoss)({ connectionString: server().url });
      boss.on('error', () => undefined);
      await boss.start();
      inbox = pgBossInbox({ boss, name, logger: false });
      await inbox.status(); // makes both queues
      const letter = (id: string, lastError: string, withIssues: boolean): DeadLetterData => {
        const data: DeadLetterData = {
          delivery: deliveryOf(id, 'ag.access_pass.issued'),
          attempts: 13,
          lastError,
          failedAt: new Date(Date.parse('2026-11-20T00:00:00Z') + Number(id.slice(2)) * 1000).toISOString(),
        };
        if (withIssues) data.issues = issueRefsOf(data);
        return data;
      };
      await boss.insert(`${name}.dead`, [
        { data: letter('n-1', 'Error: timeout after 5012 ms for ap_123', true) },
        { data: letter('o-2', 'Error: timeout after 5301 ms for ap_9', false) },
        { data: letter('o-3', 'Error: timeout after 17 ms for ap_4', false) },
        { data: letter('o-4', 'Error: the CRM is down', false) },
      ]);
    }, 60_000);
    afterAll(async () => {
      await inbox?.close();
      await boss?.stop({ graceful: false, timeout: 5000 });
    });

    it('groups old and new letters of one fault as one issue, and replays them together', async () => {
      const issues = await inbox.issues();
      expect(issues.map((i) => [i.error.message, i.count, i.sampleEventIds])).toEqual([
        ['the CRM is down', 1, ['o-4']],
        ['timeout after <n> ms for <id>', 3, ['o-3', 'o-2', 'n-1']],
      ]);
      expect(await inbox.replay({ issue: issues[1]!.key })).toBe(3);
      expect((await inbox.deadLetters()).map((d) => d.delivery.id)).toEqual(['o-4']);
    });
  },
  [pgBossEngine],
);
