// quarantine: true keeps an authenticated, well-formed event whose data this code cannot read in the
// inbox's dead letters (reason invalid, the field and what was expected), answered 200 quarantined;
// anything unauthenticated or malformed is still refused and never stored; a replay after an
// upgrade that reads it runs it once, and one still unreadable stays quarantined.
import { Registry } from 'prom-client';
import {
  createEventRouter,
  createNodeHandler,
  type AnyWebhookEvent,
  type DeliveryRecord,
  type Inbox,
  type ReceiverOptions,
} from '../lib';
import { prometheusMetrics } from '../lib/metrics';
import { buildEvent } from '../lib/testing';
import { delivery, TOKEN } from './support/contract-rows';
import { describeEachEngine } from './support/describe-each-engine';
import { DOORS, nodeDoor, type OpenDoor } from './support/doors';
import { NEST_DOORS } from './support/nest-doors';
import { eventually, type InboxEngine } from './support/inbox-engines';

/** An account-balance event whose balance came as text: a field of the wrong type for this code. */
function textBalance(id: string, balance = '12.50') {
  const event = buildEvent('ag.account_balance.low', {}, { id }) as { data: Record<string, unknown> };
  event.data.current_balance = balance;
  return event;
}
/** Breaks spec rule 2: an issued pass without its credential details. */
const noDetails = (id: string) => buildEvent('ag.access_pass.issued', { details: null }, { id });

let queues = 0;

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
    const d: OpenDoor = await door.open({
      bearerTokens: [TOKEN],
      router: createEventRouter(),
      logger: false,
      inbox,
      quarantine: true,
      onDelivery: (r) => void records.push(r),
      ...options,
    });
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

  describe.each([...DOORS, ...NEST_DOORS])('through $name', (door) => {
    it('keeps data this code cannot read as an invalid dead letter, answered 200 quarantined, running no handler', async () => {
      const inbox = newInbox();
      const { d, records } = await open(inbox, door);
      const answer = await d.send(delivery(textBalance('evt_q1')));
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toEqual({
        id: 'evt_q1',
        type: 'ag.account_balance.low',
        status: 'quarantined',
      });
      await eventually('the record', () => records.length === 1);
      expect(records[0]).toMatchObject({ eventId: 'evt_q1', outcome: 'quarantined', status: 200 });
      const { runs } = await worker(inbox);
      await eventually('a dead letter', async () => (await inbox.status()).dead === 1);
      const [dead] = await inbox.deadLetters();
      expect(dead).toMatchObject({
        reason: 'invalid',
        problem: { field: 'data.current_balance', expected: 'must be a number of dollars' },
        attempts: 1,
      });
      expect(dead!.delivery.id).toBe('evt_q1');
      expect(runs).toEqual([]);
    });
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
  });

  it('answers 400 as before without the option, and acknowledges nothing', async () => {
    const inbox = newInbox();
    const { d } = await open(inbox, nodeDoor, { quarantine: false });
    const answer = await d.send(delivery(textBalance('evt_off')));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ field: 'data.current_balance' });
    expect(await inbox.status()).toMatchObject({ waiting: 0, dead: 0 });
  });

  // As docs/inbox.md and docs/operating.md say: neither engine's enqueue adds a job as failed (BullMQ's
  // public API has no such call), so the worker's first try, running no handler, makes the dead letter.
  it('waits as a queued job until a worker takes it, then is an invalid dead letter and an issue of its own', async () => {
    const inbox = newInbox();
    const { d } = await open(inbox);
    expect((await d.send(delivery(textBalance('evt_wait')))).status).toBe(200);
    expect(await inbox.status()).toMatchObject({ waiting: 1, dead: 0 });
    expect(await inbox.deadLetters()).toEqual([]);
    expect(await inbox.issues()).toEqual([]);
    const { runs } = await worker(inbox);
    await eventually('a dead letter', async () => (await inbox.status()).dead === 1);
    expect(await inbox.status()).toMatchObject({ waiting: 0, dead: 1 });
    const issues = await inbox.issues();
    expect(issues).toEqual([
      expect.objectContaining({
        type: 'ag.account_balance.low',
        count: 1,
        sampleEventIds: ['evt_wait'],
        error: expect.objectContaining({ name: 'InvalidEventError' }),
      }),
    ]);
    expect(issues[0]!.error.message).toContain('must be a number of dollars');
    expect(runs).toEqual([]);
  });

  it('counts outcome="quarantined" in the metrics', async () => {
    const registry = new Registry();
    const inbox = newInbox();
    const { d } = await open(inbox, nodeDoor, { onDelivery: prometheusMetrics({ registry }) });
    expect((await d.send(delivery(textBalance('evt_m1')))).status).toBe(200);
    await eventually('counted', async () =>
      (await registry.metrics()).includes(
        'service_webhooks_requests_total{type="ag.account_balance.low",outcome="quarantined"} 1',
      ),
    );
  });

  it('holds a strict receiver’s rule breaker to the rules in the worker too, and a replay keeps it quarantined', async () => {
    const inbox = newInbox();
    const { d } = await open(inbox);
    expect(JSON.parse((await d.send(delivery(noDetails('evt_rule')))).text).status).toBe('quarantined');
    const { runs } = await worker(inbox);
    await eventually('a dead letter', async () => (await inbox.status()).dead === 1);
    expect(await inbox.replay({ type: 'ag.access_pass.issued' })).toBe(1);
    await eventually('dead again', async () => (await inbox.status()).dead === 1);
    const [dead] = await inbox.deadLetters();
    expect(dead).toMatchObject({ reason: 'invalid', problem: { field: 'data.details' } });
    expect(runs).toEqual([]);
  });

  it('runs a quarantined event once after an upgrade that reads it; one still unreadable stays quarantined, counted', async () => {
    const inbox = newInbox();
    const { d } = await open(inbox);
    expect((await d.send(delivery(textBalance('evt_up', '12.50')))).status).toBe(200);
    expect((await d.send(delivery(textBalance('evt_still', 'lots')))).status).toBe(200);
    const old = await worker(inbox);
    await eventually('two dead letters', async () => (await inbox.status()).dead === 2);
    await old.w.close();
    expect(old.runs).toEqual([]);

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
    expect(await upgraded.inbox.replay({ type: 'ag.account_balance.low' })).toBe(2);
    await eventually('one processed, one dead again', async () => {
      const s = await upgraded.inbox.status();
      return runs.length === 1 && s.dead === 1 && s.waiting + s.active + s.delayed === 0;
    });
    expect(runs).toEqual(['evt_up']);
    const [still] = await upgraded.inbox.deadLetters();
    expect(still).toMatchObject({
      reason: 'invalid',
      problem: { field: 'data.current_balance' },
    });
    expect(still!.delivery.id).toBe('evt_still');
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
