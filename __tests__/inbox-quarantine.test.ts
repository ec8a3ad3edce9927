// quarantine: true keeps an authenticated, well-formed event whose data this code cannot read in the
// inbox's dead letters (reason invalid, the field and what was expected), answered 200 quarantined
// (on pg-boss a dead letter before the answer, seen with no worker running or the queue paused);
// anything unauthenticated or malformed is still refused and never stored; a replay after an
// upgrade that reads it runs it once, and one still unreadable is dead again, counted once.
import { Registry } from 'prom-client';
import {
  createEventRouter,
  createNodeHandler,
  type AnyWebhookEvent,
  type DeliveryRecord,
  type Inbox,
  type IssueAlert,
  type ReceiverOptions,
} from '../lib';
import { inboxMetrics, prometheusMetrics } from '../lib/metrics';
import { buildEvent } from '../lib/testing';
import { delivery, TOKEN } from './support/contract-rows';
import { describeEachEngine } from './support/describe-each-engine';
import { DOORS, nodeDoor, type OpenDoor } from './support/doors';
import { NEST_DOORS } from './support/nest-doors';
import { bullmqEngine, eventually, type InboxEngine } from './support/inbox-engines';
import { Queue, Worker } from 'bullmq';
import { bullmqInbox } from '../lib/bullmq';
import { readOnlyBullmqInbox } from '../lib/cli/read-only-bullmq-inbox';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { jobIdFor, queuedDelivery, type QueuedDelivery } from '../lib/inbox/queued-delivery';

/** An account-balance event whose balance came as text: a field of the wrong type for this code. */
function textBalance(id: string, balance = '12.50') {
  const event = buildEvent('ag.account_balance.low', {}, { id }) as { data: Record<string, unknown> };
  event.data.current_balance = balance;
  return event;
}
/** Breaks spec rule 2: an issued pass without its credential details. */
const noDetails = (id: string) => buildEvent('ag.access_pass.issued', { details: null }, { id });

let queues = 0;
const CHECK_MS = 200;

/** A receiver of `inbox` with `quarantine: true` (node:http's unless `door` is given). */
function quarantiningDoor(inbox: Inbox, options: Partial<ReceiverOptions> = {}, door = nodeDoor) {
  return door.open({
    bearerTokens: [TOKEN],
    router: createEventRouter(),
    logger: false,
    inbox,
    quarantine: true,
    ...options,
  });
}

describeEachEngine('quarantine on $name', (engine, server) => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });
  function newInbox(): Inbox {
    const inbox = server().inbox(`quarantine-${process.pid}-${++queues}`);
    opened.push(inbox);
    return inbox;
  }
  async function open(inbox: Inbox, door = nodeDoor, options: Partial<ReceiverOptions> = {}) {
    const records: DeliveryRecord[] = [];
    const d: OpenDoor = await quarantiningDoor(
      inbox,
      { onDelivery: (r) => void records.push(r), ...options },
      door,
    );
    opened.push(d);
    return { d, records };
  }
  /** A worker whose handler counts every run; the event of a try that cannot read it never reaches it. */
  async function worker(inbox: Inbox, router = createEventRouter()) {
    const runs: AnyWebhookEvent[] = [];
    const w = await inbox.startWorker(
      router.onAny((event) => void runs.push(event)),
      { attempts: 3, backoff: { delayMs: 50 }, logger: false },
    );
    opened.push(w);
    return { runs, w };
  }

  /** The issue a quarantined event opened, found by its event id. */
  async function issueOf(inbox: Inbox, eventId: string) {
    const issue = (await inbox.issues()).find((i) => i.sampleEventIds.includes(eventId));
    if (issue === undefined) throw new Error(`no issue holds ${eventId}`);
    return issue;
  }

  /** The dead letters a quarantine made, read at once: nothing but the receiver has run. */
  async function quarantined(inbox: Inbox, count: number) {
    expect(await inbox.status()).toMatchObject({ waiting: 0, delayed: 0, active: 0, dead: count });
    return inbox.deadLetters();
  }

  describe.each([...DOORS, ...NEST_DOORS])('through $name', (door) => {
    it('is an invalid dead letter, answered 200 quarantined, running no handler', async () => {
      const inbox = newInbox();
      const { d, records } = await open(inbox, door);
      const answer = await d.send(delivery(textBalance('evt_q1')));
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toEqual({
        id: 'evt_q1',
        type: 'ag.account_balance.low',
        status: 'quarantined',
      });
      const [dead, ...more] = await quarantined(inbox, 1);
      expect(more).toEqual([]);
      expect(dead).toMatchObject({
        reason: 'invalid',
        problem: { field: 'data.current_balance', expected: 'must be a number of dollars' },
        attempts: 0,
        lastError: expect.stringMatching(/^InvalidEventError: .*data\.current_balance/),
      });
      expect(dead!.delivery.id).toBe('evt_q1');
      await eventually('the record', () => records.length === 1);
      expect(records[0]).toMatchObject({ eventId: 'evt_q1', outcome: 'quarantined', status: 200 });
    });
  });

  it.each([
    ['with no worker running', false],
    ['with the inbox paused', true],
  ])('%s, is read at once in deadLetters() and issues() as an issue of its own', async (_what, paused) => {
    const inbox = newInbox();
    if (paused) await inbox.pause();
    const { d } = await open(inbox);
    expect((await d.send(delivery(textBalance('evt_wait')))).status).toBe(200);
    expect(await inbox.status()).toMatchObject({ paused, waiting: 0, dead: 1 });
    expect((await inbox.deadLetters()).map((l) => [l.delivery.id, l.reason, l.problem?.field])).toEqual([
      ['evt_wait', 'invalid', 'data.current_balance'],
    ]);
    const issues = await inbox.issues();
    expect(issues).toEqual([
      expect.objectContaining({
        type: 'ag.account_balance.low',
        handler: null,
        count: 1,
        sampleEventIds: ['evt_wait'],
        error: expect.objectContaining({ name: 'InvalidEventError' }),
      }),
    ]);
    expect(issues[0]!.error.message).toContain('data.current_balance');
    expect(issues[0]!.error.message).toContain('must be a number of dollars');
  });

  it('opens its issue for onIssue once across three workers of a paused queue', async () => {
    const name = newInbox().name;
    const alerts: { worker: number; alert: IssueAlert }[] = [];
    const runs: string[] = [];
    const inboxes: Inbox[] = [];
    for (let worker = 0; worker < 3; worker++) {
      const inbox = server().inbox(name);
      opened.push(inbox);
      inboxes.push(inbox);
      if (worker === 0) await inbox.pause();
      opened.push(
        await inbox.startWorker(
          createEventRouter().onAny((event) => void runs.push(event.id)),
          {
            logger: false,
            onIssue: (alert) => void alerts.push({ worker, alert }),
            issueCheckMs: 100,
          },
        ),
      );
    }
    const { d } = await open(inboxes[1]!);
    expect((await d.send(delivery(textBalance('evt_alert')))).status).toBe(200);
    const balance = await issueOf(inboxes[2]!, 'evt_alert');
    await eventually('the issue opens', () => alerts.length === 1, 20_000);
    // A second issue's opening is announced by a later check, which saw the first one again.
    expect((await d.send(delivery(noDetails('evt_alert2')))).status).toBe(200);
    const rule = await issueOf(inboxes[0]!, 'evt_alert2');
    await eventually('the second issue opens', () => alerts.length >= 2, 20_000);
    expect(alerts.map((a) => [a.alert.issue.key, a.alert.transition, a.alert.threshold])).toEqual([
      [balance.key, 'opened', 1],
      [rule.key, 'opened', 1],
    ]);
    expect(runs).toEqual([]);
    expect(await inboxes[0]!.status()).toMatchObject({ paused: true, waiting: 0, dead: 2 });
  }, 60_000);

  it.each([
    ['quarantined twice', [textBalance('evt_twice'), textBalance('evt_twice')], { waiting: 0, dead: 1 }],
    [
      'quarantined, then delivered readable',
      [textBalance('evt_then'), buildEvent('ag.account_balance.low', {}, { id: 'evt_then' })],
      // pg-boss's letter leaves its job cancelled in the queue, which refuses the readable one; BullMQ's
      // is in the quarantine queue, which its enqueue does not read: queued, and a replay of the letter
      // then adds nothing (the id is the queue's already) and removes it.
      engine.name === 'pg-boss' ? { waiting: 0, dead: 1 } : { waiting: 1, dead: 1 },
    ],
    [
      'delivered readable, then quarantined',
      [buildEvent('ag.account_balance.low', {}, { id: 'evt_first' }), textBalance('evt_first')],
      { waiting: 1, dead: 0 },
    ],
  ])('holds one event %s once', async (_what, events, counts) => {
    const inbox = newInbox();
    const { d } = await open(inbox);
    for (const event of events) expect((await d.send(delivery(event))).status).toBe(200);
    expect(await inbox.status()).toMatchObject({ ...counts, delayed: 0, active: 0 });
    expect((await inbox.deadLetters()).length).toBe(counts.dead);
    if (counts.dead === 1) expect((await inbox.issues()).map((i) => i.count)).toEqual([1]);
    if (counts.waiting === 1 && counts.dead === 1) {
      expect(await inbox.replay({})).toBe(1);
      expect(await inbox.status()).toMatchObject({ waiting: 1, dead: 0 });
    }
  });

  it('pages its letters with the others: each reached once, forwards and backwards', async () => {
    const inbox = newInbox();
    const { d } = await open(inbox);
    opened.push(
      await inbox.startWorker(
        createEventRouter().onAny(() => {
          throw new Error('the downstream is down');
        }),
        { attempts: 1, logger: false },
      ),
    );
    // Interleaved: a handler's dead letter, then a quarantined one, four times.
    for (let i = 0; i < 4; i++) {
      expect(
        (await d.send(delivery(buildEvent('ag.account_balance.low', {}, { id: `evt_f${i}` })))).status,
      ).toBe(200);
      await eventually('its dead letter', async () => (await inbox.status()).dead === 2 * i + 1);
      expect((await d.send(delivery(textBalance(`evt_q${i}`)))).status).toBe(200);
      expect((await inbox.status()).dead).toBe(2 * i + 2);
    }
    const all = (await inbox.deadLetters()).map((l) => l.delivery.id);
    expect([...all].sort()).toEqual([
      'evt_f0',
      'evt_f1',
      'evt_f2',
      'evt_f3',
      'evt_q0',
      'evt_q1',
      'evt_q2',
      'evt_q3',
    ]);
    const forwards: string[] = [];
    for (let page = await inbox.deadLetters({ limit: 3 }); page.length > 0;) {
      forwards.push(...page.map((l) => l.delivery.id));
      page = await inbox.deadLetters({ limit: 3, after: page.at(-1)!.cursor! });
    }
    expect(forwards).toEqual(all);
    const [last] = await inbox.deadLetters({
      limit: 1,
      after: (await inbox.deadLetters({ limit: 7 })).at(-1)!.cursor!,
    });
    const backwards: string[] = [];
    for (let page = await inbox.deadLetters({ limit: 3, before: last!.cursor! }); page.length > 0;) {
      backwards.unshift(...page.map((l) => l.delivery.id));
      page = await inbox.deadLetters({ limit: 3, before: page[0]!.cursor! });
    }
    expect([...backwards, last!.delivery.id]).toEqual(all);
  }, 60_000);

  it('replays its letters with every option: a dry run counts them, an aborted signal moves none, onProgress hears of them', async () => {
    const inbox = newInbox();
    const { d } = await open(inbox);
    for (const id of ['evt_o1', 'evt_o2', 'evt_o3'])
      expect((await d.send(delivery(textBalance(id)))).status).toBe(200);
    const { key } = await issueOf(inbox, 'evt_o1');
    const seen: { replayed: number; matched: number }[] = [];
    expect(await inbox.replay({ issue: key }, { dryRun: true, onProgress: (p) => void seen.push(p) })).toBe(
      3,
    );
    expect(seen.at(-1)).toEqual({ replayed: 0, matched: 3 });
    expect(await inbox.replay({ issue: key }, { signal: AbortSignal.abort() })).toBe(0);
    expect(await inbox.status()).toMatchObject({ waiting: 0, dead: 3 });
    seen.length = 0;
    expect(await inbox.replay('evt_o2', { onProgress: (p) => void seen.push(p) })).toBe(1);
    expect(seen.at(-1)).toEqual({ replayed: 1, matched: 1 });
    expect(await inbox.status()).toMatchObject({ waiting: 1, dead: 2 });
    expect((await inbox.deadLetters()).map((l) => l.delivery.id).sort()).toEqual(['evt_o1', 'evt_o3']);
    expect((await inbox.issues()).map((i) => i.count)).toEqual([2]);
  });

  it.each([
    [
      'a bad token',
      {
        ...delivery(textBalance('evt_r1')),
        headers: { ...delivery({}).headers, authorization: 'Bearer nope' },
      },
      401,
    ],
    ['bad JSON', delivery(null, {}, '{"specversion":"1.0",'), 400],
    ['not a CloudEvent', delivery({ ...textBalance('evt_r3'), specversion: undefined }), 400],
    ['data that is no object', delivery({ ...textBalance('evt_r4'), data: 'twelve' }), 400],
    ['an oversized body', delivery({ ...textBalance('evt_r5'), pad: 'x'.repeat(2048) }), 413],
  ])('still refuses %s, and stores nothing', async (_what, request, status) => {
    const inbox = newInbox();
    const { d, records } = await open(inbox, nodeDoor, { limit: 1024 });
    const answer = await d.send(request);
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    await eventually('the record', () => records.length === 1);
    expect(records[0]!.outcome).not.toBe('quarantined');
    expect(await inbox.status()).toMatchObject({ waiting: 0, delayed: 0, active: 0, dead: 0 });
    expect(await inbox.deadLetters()).toEqual([]);
  });

  it('answers 400 as before without the option, and acknowledges nothing', async () => {
    const inbox = newInbox();
    const { d } = await open(inbox, nodeDoor, { quarantine: false });
    const answer = await d.send(delivery(textBalance('evt_off')));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ field: 'data.current_balance' });
    expect(await inbox.status()).toMatchObject({ waiting: 0, dead: 0 });
  });

  it('counts outcome="quarantined" in the metrics, and its dead letter and issue in the inbox gauges at once', async () => {
    const registry = new Registry();
    const inbox = newInbox();
    inboxMetrics({ inbox, registry });
    const { d } = await open(inbox, nodeDoor, { onDelivery: prometheusMetrics({ registry }) });
    expect((await d.send(delivery(textBalance('evt_m1')))).status).toBe(200);
    await eventually('counted', async () =>
      (await registry.metrics()).includes(
        'service_webhooks_requests_total{type="ag.account_balance.low",outcome="quarantined"} 1',
      ),
    );
    const text = await registry.metrics();
    const labels = `{queue="${inbox.name}",engine="${engine.name}"}`;
    expect(text).toContain(`service_webhooks_inbox_dead_letters${labels} 1`);
    expect(text).toContain(`service_webhooks_inbox_issues_open${labels} 1`);
  });

  it('holds a strict receiver’s rule breaker to the rules in the worker too, and a replay keeps it quarantined', async () => {
    const inbox = newInbox();
    const { d } = await open(inbox);
    expect(JSON.parse((await d.send(delivery(noDetails('evt_rule')))).text).status).toBe('quarantined');
    expect(await quarantined(inbox, 1)).toEqual([
      expect.objectContaining({
        reason: 'invalid',
        attempts: 0,
        problem: expect.objectContaining({ field: 'data.details' }),
      }),
    ]);
    const { runs } = await worker(inbox);
    expect(await inbox.replay({ type: 'ag.access_pass.issued' })).toBe(1);
    // Dead again once the worker's try read it: its letter counts that one try (a replay starts the
    // count again, on both engines).
    await eventually('dead again', async () => {
      const s = await inbox.status();
      const [letter] = await inbox.deadLetters();
      return s.dead === 1 && s.waiting + s.active + s.delayed === 0 && letter?.attempts === 1;
    });
    const [dead, ...more] = await inbox.deadLetters();
    expect(more).toEqual([]);
    expect(dead).toMatchObject({ reason: 'invalid', problem: { field: 'data.details' } });
    expect(await inbox.status()).toMatchObject({ waiting: 0, delayed: 0, active: 0, dead: 1 });
    expect(runs).toEqual([]);
  });

  it('runs a quarantined event once after an upgrade, replayed by its issue; one still unreadable is dead again, counted once', async () => {
    const inbox = newInbox();
    const { d } = await open(inbox);
    expect((await d.send(delivery(textBalance('evt_up', '12.50')))).status).toBe(200);
    expect((await d.send(delivery(textBalance('evt_still', 'lots')))).status).toBe(200);
    const issue = await issueOf(inbox, 'evt_up');
    expect(issue).toMatchObject({ count: 2 });

    // The upgrade: a build whose schema reads a balance sent as decimal text.
    const upgraded = upgradedInbox(engine, server().url, inbox.name);
    opened.push(upgraded.inbox);
    const runs: string[] = [];
    const w = await upgraded.inbox.startWorker(
      upgraded.createEventRouter().onAny((event) => void runs.push(event.id)),
      { attempts: 3, backoff: { delayMs: 50 }, logger: false },
    );
    opened.push(w);
    const before = await upgraded.inbox.deadLetters();
    // Read again with the code deployed now: the one it reads has no problem left.
    expect(before.find((l) => l.delivery.id === 'evt_up')).toMatchObject({ reason: 'invalid' });
    expect(before.find((l) => l.delivery.id === 'evt_up')!.problem).toBeUndefined();
    const progress: { replayed: number; matched: number }[] = [];
    expect(
      await upgraded.inbox.replay({ issue: issue.key }, { onProgress: (p) => void progress.push(p) }),
    ).toBe(2);
    expect(progress.at(-1)).toEqual({ replayed: 2, matched: 2 });
    await eventually('one processed, one dead again', async () => {
      const s = await upgraded.inbox.status();
      return runs.length === 1 && s.dead === 1 && s.waiting + s.active + s.delayed === 0;
    });
    expect(runs).toEqual(['evt_up']);
    const [still, ...more] = await upgraded.inbox.deadLetters();
    expect(more).toEqual([]);
    expect(still).toMatchObject({
      reason: 'invalid',
      attempts: 1,
      problem: { field: 'data.current_balance' },
    });
    expect(still!.delivery.id).toBe('evt_still');
    expect((await upgraded.inbox.issues()).map((i) => [i.sampleEventIds, i.count])).toEqual([
      [['evt_still'], 1],
    ]);
    // One more of it quarantined: one issue of both letters (on BullMQ, in two failed sets).
    expect((await d.send(delivery(textBalance('evt_more', 'plenty')))).status).toBe(200);
    expect((await upgraded.inbox.issues()).map((i) => [i.key, i.sampleEventIds, i.count])).toEqual([
      [issue.key, ['evt_more', 'evt_still'], 2],
    ]);
  });
});

// BullMQ fails a quarantined event in a queue of its own (`<name>-quarantine`): what a receiver or a
// replay killed half-way leaves there is failed, or moved, by the next step, never lost or doubled.
describeEachEngine(
  'the quarantine queue on $name',
  (_engine, server) => {
    const opened: { close(): Promise<void> }[] = [];
    afterEach(async () => {
      for (const o of opened.reverse()) await o.close();
      opened.length = 0;
    });
    function parts(prefix: string) {
      const name = `${prefix}-${process.pid}-${++queues}`;
      const inbox = server().inbox(name);
      const queue = new Queue(name, { connection: { url: server().url } });
      const held = new Queue(`${name}-quarantine`, { connection: { url: server().url } });
      opened.push(inbox, queue, held);
      return { inbox, queue, held };
    }
    /** The queued delivery a receiver makes of `event`. */
    function queued(event: ReturnType<typeof textBalance>) {
      const { id, type, source, time } = event as unknown as Record<
        'id' | 'type' | 'source' | 'time',
        string
      >;
      const raw = event as unknown as AnyWebhookEvent['raw'];
      return queuedDelivery(
        idempotencyKey('', source, id),
        { id, type, source, time, raw },
        () => undefined,
        null,
      );
    }
    async function receiver(inbox: Inbox) {
      const d = await quarantiningDoor(inbox);
      opened.push(d);
      return d;
    }

    it.each([
      ['the next quarantine', 'quarantine'],
      ["a worker's start", 'worker'],
    ])('fails a job a killed receiver added but did not fail, at %s', async (_what, by) => {
      const { inbox, held } = parts('sweep');
      // The receiver's add, then nothing: killed before it took the job.
      const left = queued(textBalance('evt_left'));
      await held.add(left.type, left, { jobId: jobIdFor(left.key), removeOnFail: false });
      expect(await inbox.status()).toMatchObject({ dead: 0 });
      if (by === 'quarantine')
        expect((await (await receiver(inbox)).send(delivery(textBalance('evt_next')))).status).toBe(200);
      else opened.push(await inbox.startWorker(createEventRouter(), { logger: false }));
      const letters = await inbox.deadLetters();
      expect(letters.map((l) => [l.delivery.id, l.reason, l.problem?.field, l.attempts]).sort()).toEqual(
        [
          ['evt_left', 'invalid', 'data.current_balance', 0],
          ...(by === 'quarantine' ? [['evt_next', 'invalid', 'data.current_balance', 0]] : []),
        ].sort(),
      );
      expect((await inbox.issues()).map((i) => i.count)).toEqual([letters.length]);
    });

    it('fails a job a killed receiver took but did not fail, once its lock runs out, with a worker running', async () => {
      const { held } = parts('stalled');
      const name = held.name.slice(0, -'-quarantine'.length);
      // Locks of 1 s, checked every second, so the killed receiver's lock runs out within the row.
      const inbox = bullmqInbox({ connection: server().url, name, lockDurationMs: 1000, logger: false });
      opened.push(inbox);
      const left = queued(textBalance('evt_taken'));
      await held.add(left.type, left, { jobId: jobIdFor(left.key), removeOnFail: false });
      // The receiver's take (its lock, 1 s), then nothing: killed before it failed the job.
      const killed = new Worker(held.name, null, {
        connection: { url: server().url },
        autorun: false,
        lockDuration: 1000,
      });
      expect((await killed.getNextJob('killed-receiver', { block: false }))?.id).toBe(jobIdFor(left.key));
      await killed.close();
      opened.push(await inbox.startWorker(createEventRouter(), { logger: false }));
      // Not a dead letter while its lock holds; then failed by the worker's process, not left waiting.
      await eventually('the taken job is a dead letter', async () => (await inbox.status()).dead === 1);
      expect((await inbox.deadLetters()).map((l) => [l.delivery.id, l.reason, l.attempts])).toEqual([
        ['evt_taken', 'invalid', 0],
      ]);
      expect(await held.getJobCounts('wait', 'active', 'failed')).toEqual({ wait: 0, active: 0, failed: 1 });
      expect((await inbox.issues()).map((i) => i.count)).toEqual([1]);
    });

    it('answers 503, not 200, while another receiver holds the job taken and unfailed; 200 once it is failed', async () => {
      const { inbox, held } = parts('taken');
      const event = textBalance('evt_held');
      const left = queued(event);
      await held.add(left.type, left, { jobId: jobIdFor(left.key), removeOnFail: false });
      // Another receiver's take (a lock longer than the row), then nothing: it never fails the job.
      const taker = new Worker(held.name, null, { connection: { url: server().url }, autorun: false });
      opened.push(taker);
      const token = 'a-receiver-that-hangs';
      const job = await taker.getNextJob(token, { block: false });
      expect(job?.id).toBe(jobIdFor(left.key));
      const d = await receiver(inbox);
      expect((await d.send(delivery(event))).status).toBe(503);
      expect(await inbox.status()).toMatchObject({ dead: 0 });
      // Its taker fails it at last: the retry is acknowledged, one dead letter.
      await job!.moveToFailed(new Error('unreadable'), token);
      expect((await d.send(delivery(event))).status).toBe(200);
      expect((await inbox.deadLetters()).map((l) => l.delivery.id)).toEqual(['evt_held']);
    });

    it("is read by the CLI's read-only inbox: status, dead letters and issues", async () => {
      const { inbox } = parts('cli');
      expect((await (await receiver(inbox)).send(delivery(textBalance('evt_cli')))).status).toBe(200);
      const read = readOnlyBullmqInbox(server().url, inbox.name);
      opened.push(read);
      expect(await read.status()).toMatchObject({ waiting: 0, dead: 1 });
      expect((await read.deadLetters()).map((l) => [l.delivery.id, l.reason])).toEqual([
        ['evt_cli', 'invalid'],
      ]);
      expect((await read.issues()).map((i) => [i.sampleEventIds, i.count])).toEqual([[['evt_cli'], 1]]);
    });

    // One issue in both tallies: letters still quarantined, and letters replayed from there that the
    // worker failed again in the queue (same type and field path). Neither tally alone reaches 10.
    it('announces an issue in both tallies once per transition across three workers', async () => {
      const { inbox, queue, held } = parts('both');
      const alerts: { worker: number; alert: IssueAlert }[] = [];
      const runs: string[] = [];
      const workers: Inbox[] = [];
      for (let worker = 0; worker < 3; worker++) {
        // The upgraded build reads a balance of decimal text: 'lots' stays unreadable, '12.50' runs.
        const upgraded = upgradedInbox(bullmqEngine, server().url, inbox.name);
        opened.push(upgraded.inbox);
        workers.push(upgraded.inbox);
        opened.push(
          await upgraded.inbox.startWorker(
            upgraded.createEventRouter().onAny((event) => void runs.push(event.id)),
            {
              attempts: 1,
              logger: false,
              onIssue: (alert) => void alerts.push({ worker, alert }),
              issueCheckMs: CHECK_MS,
            },
          ),
        );
      }
      const transitions = () => alerts.map((a) => `${a.alert.transition} ${a.alert.threshold}`);
      const d = await receiver(inbox);
      const unreadable = ['evt_l1', 'evt_l2', 'evt_l3'].map((id) => textBalance(id, 'lots'));
      for (const event of unreadable) expect((await d.send(delivery(event))).status).toBe(200);
      await eventually('the issue opens', () => transitions().includes('opened 1'), 20_000);
      // Two replayed, failed again in the queue; the third stays quarantined, so it never closes.
      for (const id of ['evt_l1', 'evt_l2']) expect(await workers[0]!.replay(id)).toBe(1);
      await eventually('failed again', async () => (await queue.getFailedCount()) === 2, 20_000);
      const readable = Array.from({ length: 8 }, (_, i) => textBalance(`evt_u${i}`));
      for (const event of readable) expect((await d.send(delivery(event))).status).toBe(200);
      await eventually('it grows past 10', () => transitions().includes('grew 10'), 20_000);
      const [issue, ...others] = await workers[1]!.issues();
      expect(others).toEqual([]);
      expect(issue).toMatchObject({ count: 11, error: { name: 'InvalidEventError' } });
      expect([await queue.getFailedCount(), await held.getFailedCount()]).toEqual([2, 9]);

      // The readable ones run; the unreadable ones are removed (as from bull-board), from both queues.
      for (let i = 0; i < 8; i++) expect(await workers[i % 3]!.replay(`evt_u${i}`)).toBe(1);
      await eventually('the eight run', () => runs.length === 8, 20_000);
      for (const [q, event] of [
        [queue, unreadable[0]!],
        [queue, unreadable[1]!],
        [held, unreadable[2]!],
      ] as const)
        await (await q.getJob(jobIdFor(queued(event).key)))!.remove();
      await eventually('it resolves', () => transitions().includes('resolved 0'), 20_000);
      // Many more checks run by all three workers: none announces any change again.
      await new Promise((resolve) => setTimeout(resolve, CHECK_MS * 10));
      expect(transitions()).toEqual(['opened 1', 'grew 10', 'resolved 0']);
      expect(alerts.every((a) => a.alert.issue.key === issue!.key)).toBe(true);
      expect(runs.sort()).toEqual(readable.map((e) => (e as unknown as { id: string }).id).sort());
      expect(await inbox.status()).toMatchObject({ waiting: 0, active: 0, dead: 0 });
    }, 120_000);

    it('replays a letter a killed replay had added to the queue but not removed: once, not lost', async () => {
      const { inbox, queue } = parts('moved');
      expect((await (await receiver(inbox)).send(delivery(textBalance('evt_half')))).status).toBe(200);
      const [letter] = await inbox.deadLetters();
      // The replay's add, then nothing: killed before it removed the letter.
      await queue.add(letter!.delivery.type, letter!.delivery, { jobId: jobIdFor(letter!.delivery.key) });
      expect(await inbox.status()).toMatchObject({ waiting: 1, dead: 1 });
      expect(await inbox.replay({})).toBe(1);
      expect(await inbox.status()).toMatchObject({ waiting: 1, dead: 0 });
      expect(await inbox.replay({})).toBe(0);
    });
  },
  [bullmqEngine],
);

describe('quarantine through an inbox of another kind', () => {
  /** An inbox of your own: it records what it is given. */
  function ownInbox(quarantine?: (delivery: QueuedDelivery) => Promise<void>) {
    const enqueued: QueuedDelivery[] = [];
    const inbox = {
      engine: 'own',
      name: 'own',
      enqueue: async (delivery: QueuedDelivery) => void enqueued.push(delivery),
      startWorker: () => Promise.reject(new Error('not here')),
      deadLetters: async () => [],
      replay: async () => 0,
      ...(quarantine === undefined ? {} : { quarantine }),
    } as unknown as Inbox;
    return { inbox, enqueued };
  }
  async function send(inbox: Inbox) {
    const records: DeliveryRecord[] = [];
    const d = await quarantiningDoor(inbox, { onDelivery: (r) => void records.push(r) });
    try {
      const answer = await d.send(delivery(textBalance('evt_own')));
      await eventually('the record', () => records.length === 1);
      return { answer, record: records[0]! };
    } finally {
      await d.close();
    }
  }

  it('answers 503, acknowledging nothing, when its quarantine() rejects; nothing is enqueued', async () => {
    const { inbox, enqueued } = ownInbox(() => Promise.reject(new Error('the store is away')));
    const { answer, record } = await send(inbox);
    expect(answer.status).toBe(503);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(record.outcome).not.toBe('quarantined');
    expect(enqueued).toEqual([]);
  });

  it('gives the event to enqueue() when the inbox has no quarantine()', async () => {
    const { inbox, enqueued } = ownInbox();
    const { answer, record } = await send(inbox);
    expect(answer.status).toBe(200);
    expect(record.outcome).toBe('quarantined');
    expect(enqueued.map((d) => d.id)).toEqual(['evt_own']);
  });
});

describe('quarantine is checked at construction', () => {
  it.each([
    [{ quarantine: true }, /\[service-webhooks\] createNodeHandler: quarantine: true needs an inbox/],
    [{ quarantine: 'yes' }, /createNodeHandler: quarantine must be a boolean/],
    [{ quarantin: true }, /unknown option "quarantin"; did you mean "quarantine"\?/],
  ])('%p throws', (options, message) => {
    expect(() =>
      createNodeHandler({
        bearerTokens: [TOKEN],
        router: createEventRouter(),
        logger: false,
        ...options,
      } as never),
    ).toThrow(message);
  });
});

/**
 * The same inbox as built by a later version of this code whose schema reads `current_balance`
 * sent as decimal text: its own copy of the library, loaded with that schema.
 */
function upgradedInbox(engine: InboxEngine, url: string, name: string) {
  let loaded: { inbox: Inbox; createEventRouter: typeof createEventRouter } | undefined;
  jest.isolateModules(() => {
    jest.doMock('../lib/events/data-schemas', () => {
      const actual = jest.requireActual<typeof import('../lib/events/data-schemas')>(
        '../lib/events/data-schemas',
      );
      const { z } = jest.requireActual<typeof import('zod')>('zod');
      let built: ReturnType<typeof actual.dataSchemas> | undefined;
      return {
        ...actual,
        dataSchemas() {
          const schemas = actual.dataSchemas();
          built ??= {
            ...schemas,
            eventDataSchema: schemas.eventDataSchema.extend({
              current_balance: z
                .union(
                  [
                    z.number(),
                    z
                      .string()
                      .regex(/^\d+(\.\d+)?$/)
                      .transform(Number),
                  ],
                  {
                    error: 'must be a number of dollars',
                  },
                )
                .nullable()
                .default(null),
            }) as unknown as typeof schemas.eventDataSchema,
          };
          return built;
        },
      };
    });
    /* eslint-disable @typescript-eslint/no-require-imports -- a second copy of the library, loaded with the upgrade */
    const lib = require('../lib') as typeof import('../lib');
    const inbox =
      engine.name === 'bullmq'
        ? (require('../lib/bullmq') as typeof import('../lib/bullmq')).bullmqInbox({
            connection: url,
            name,
            logger: false,
          })
        : (require('../lib/pg-boss') as typeof import('../lib/pg-boss')).pgBossInbox({
            connectionString: url,
            name,
            logger: false,
          });
    /* eslint-enable @typescript-eslint/no-require-imports */
    loaded = { inbox, createEventRouter: lib.createEventRouter };
  });
  return loaded!;
}
