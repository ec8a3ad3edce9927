import {
  createEventRouter,
  RetryLater,
  type AnyWebhookEvent,
  type DeliveryRecord,
  type IdempotencyStore,
  type ReceiverOptions,
} from '../lib';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';
import { captureLogger } from './support/capture-logger';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS, type OpenDoor, type RawRequest } from './support/doors';
import { gate } from './support/gate';
import { pollUntil } from './support/poll-until';
import { watchProcess } from './support/watch-process';

const TOKEN = 'tok_records';
const SOURCE = '/service/access-grid';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Handlers that fail, refuse or hang on cue (the event's `title`); card templates have none. */
const router = createEventRouter().on('ag.access_pass.*', async (event: AnyWebhookEvent) => {
  const cue = (event.data as { title?: string | null }).title;
  if (cue === 'fail') throw new Error('the pass store said no');
  if (cue === 'retry-later') throw new RetryLater('downstream is down');
  if (cue === 'slow') await sleep(300);
});

function delivery(event: unknown, extra: Record<string, string> = {}, body?: string): RawRequest {
  return {
    headers: {
      ...DELIVERY_HEADERS,
      authorization: `Bearer ${TOKEN}`,
      'x-service-webhook-attempt': '3',
      ...extra,
    },
    body: body ?? JSON.stringify(event),
  };
}
const issued = (id: string, data: Record<string, unknown> = {}) =>
  buildEvent('ag.access_pass.issued', data, { id });

/**
 * A record as compared: durations vary, so only whether the handlers ran is kept, and each handler
 * as `name:outcome:attempt`.
 */
type Compared = Omit<DeliveryRecord, 'durationMs' | 'handlerMs' | 'handlers'> & {
  handlerMs: 'ran' | null;
  handlers?: string[];
};
function compared(record: DeliveryRecord): Compared {
  const { durationMs, handlerMs, handlers, ...rest } = record;
  expect(durationMs).toBeGreaterThanOrEqual(handlerMs ?? 0);
  const named = handlers?.map((h) => `${h.handler}:${h.outcome}:${h.attempt}`);
  return {
    ...rest,
    handlerMs: handlerMs === null ? null : 'ran',
    ...(named === undefined ? {} : { handlers: named }),
  };
}
const RAN = (outcome: string) => [`ag.access_pass.*:${outcome}:1`];

const NOTHING_READ = { eventId: null, type: null, source: null, layout: null, handlerMs: null };
const refused = (status: number, problem: string, attempt: number | null = 3): Compared => ({
  ...NOTHING_READ,
  outcome: 'rejected',
  status,
  problem,
  attempt,
});
const read = (id: string, type = 'ag.access_pass.issued', layout: 'A' | 'B' = 'A') => ({
  eventId: id,
  type,
  source: layout === 'A' ? SOURCE : 'service',
  layout,
  attempt: 3,
});

const failingStore: IdempotencyStore = {
  claim: async () => Promise.reject(new Error('ECONNREFUSED')),
  markDone: async () => undefined,
  release: async () => undefined,
  get: async () => null,
};

interface Row {
  name: string;
  request: RawRequest;
  record: Compared;
  options?: Partial<ReceiverOptions>;
}

const ROWS: Row[] = [
  {
    name: 'a processed delivery',
    request: delivery(issued('evt_ok')),
    record: {
      ...read('evt_ok'),
      outcome: 'processed',
      status: 200,
      problem: null,
      handlerMs: 'ran',
      handlers: RAN('ok'),
    },
  },
  {
    name: 'layout B',
    request: delivery(buildEvent('ag.access_pass.devices.added', {}, { id: 'evt_b', layout: 'B' })),
    record: {
      ...read('evt_b', 'ag.access_pass.devices.added', 'B'),
      outcome: 'processed',
      status: 200,
      problem: null,
      handlerMs: 'ran',
      handlers: RAN('ok'),
    },
  },
  {
    name: 'a type without a handler',
    request: delivery(buildEvent('ag.card_template.created', {}, { id: 'evt_u' })),
    record: {
      ...read('evt_u', 'ag.card_template.created'),
      outcome: 'unhandled',
      status: 200,
      problem: null,
      // No handler covers the type and there is no onUnhandled/onAny: none ran.
      handlerMs: null,
    },
  },
  {
    name: 'the handshake',
    request: { headers: { 'x-service-webhook-challenge': 'chl_1' } },
    record: { ...NOTHING_READ, outcome: 'handshake', status: 200, problem: null, attempt: null },
  },
  {
    name: 'a handshake without a usable challenge',
    request: { headers: { 'x-service-webhook-challenge': 'two words' } },
    record: refused(400, 'invalid-challenge', null),
  },
  {
    name: 'GET',
    request: { method: 'GET', headers: { authorization: `Bearer ${TOKEN}` } },
    record: refused(405, 'method-not-allowed', null),
  },
  {
    name: 'no token',
    request: delivery(issued('e'), { authorization: '' }),
    record: refused(401, 'missing-token'),
  },
  {
    name: 'a wrong token',
    request: delivery(issued('e'), { authorization: 'Bearer nope' }),
    record: refused(401, 'invalid-token'),
  },
  {
    name: 'a body over the limit',
    request: delivery(issued('e', { metadata: { pad: 'x'.repeat(3000) } })),
    record: refused(413, 'payload-too-large'),
    options: { limit: 2048 },
  },
  {
    name: 'text/plain',
    request: delivery(issued('e'), { 'content-type': 'text/plain' }),
    record: refused(415, 'unsupported-media-type'),
  },
  { name: 'invalid JSON', request: delivery(null, {}, '{"id":'), record: refused(400, 'invalid-json') },
  { name: 'a batch', request: delivery([issued('e')]), record: refused(400, 'not-a-cloudevent') },
  {
    name: 'no specversion',
    request: delivery({ ...issued('e'), specversion: undefined }),
    record: refused(400, 'invalid-cloudevent'),
  },
  {
    name: 'a broken per-type rule',
    request: delivery(issued('e', { details: undefined })),
    // Refused after its envelope was checked: the record names the event, not its layout.
    record: {
      ...refused(400, 'event-rule-violated'),
      eventId: 'e',
      type: 'ag.access_pass.issued',
      source: SOURCE,
    },
  },
  {
    name: 'an attempt header that is not a positive integer',
    request: delivery(issued('e'), { authorization: '', 'x-service-webhook-attempt': '0' }),
    record: refused(401, 'missing-token', null),
  },
  {
    name: 'a failing handler',
    request: delivery(issued('evt_f', { title: 'fail' })),
    record: {
      ...read('evt_f'),
      outcome: 'failed',
      status: 500,
      problem: 'handler-failed',
      handlerMs: 'ran',
      handlers: RAN('failed'),
    },
  },
  {
    name: 'a handler asking to retry later',
    request: delivery(issued('evt_r', { title: 'retry-later' })),
    record: {
      ...read('evt_r'),
      outcome: 'failed',
      status: 503,
      problem: 'retry-later',
      handlerMs: 'ran',
      handlers: RAN('failed'),
    },
  },
  {
    name: 'a handler past timeoutMs',
    request: delivery(issued('evt_t', { title: 'slow' })),
    record: {
      ...read('evt_t'),
      outcome: 'timeout',
      status: 503,
      problem: 'handler-timeout',
      handlerMs: 'ran',
      handlers: RAN('timeout'),
    },
    options: { timeoutMs: 50 },
  },
  {
    name: 'a store that is down',
    request: delivery(issued('evt_s')),
    record: {
      ...read('evt_s'),
      outcome: 'store-unavailable',
      status: 503,
      problem: 'store-unavailable',
      handlerMs: null,
    },
    options: { idempotency: { store: failingStore, timeoutMs: 100 } },
  },
];

/** Every door's records, in table order, to compare the doors with each other at the end. */
const byDoor = new Map<string, Compared[]>();

describe.each(DOORS)('delivery records through $name', (door) => {
  let open: OpenDoor | undefined;
  let records: DeliveryRecord[] = [];
  afterEach(async () => {
    await open?.drain({ timeoutMs: 2000 });
    await open?.close();
    open = undefined;
  });
  async function start(options: Partial<ReceiverOptions> = {}) {
    records = [];
    open = await door.open({
      bearerTokens: [TOKEN],
      router,
      logger: false,
      onDelivery: (record) => void records.push(record),
      ...options,
    });
    return open;
  }

  it.each(ROWS)('$name: one record, $record.outcome', async (row) => {
    const d = await start(row.options);
    const answer = await d.send(row.request);
    expect(answer.status).toBe(row.record.status);
    expect(records).toHaveLength(1);
    const record = compared(records[0] as DeliveryRecord);
    expect(record).toEqual(row.record);
    byDoor.set(door.name, [...(byDoor.get(door.name) ?? []), record]);
  });

  it('records a redelivery as duplicate, and a concurrent one as conflict', async () => {
    const started = gate('the first evt_busy handler started');
    const release = gate('the test released the first evt_busy handler');
    const held = createEventRouter().on('ag.access_pass.*', async (event: AnyWebhookEvent) => {
      if (event.id !== 'evt_busy') return;
      started.open();
      await release.opened;
    });
    const d = await start({ timeoutMs: 5000, router: held });
    await d.send(delivery(issued('evt_dup')));
    await d.send(delivery(issued('evt_dup')));
    const first = d.send(delivery(issued('evt_busy')));
    await started.opened;
    await d.send(delivery(issued('evt_busy')));
    release.open();
    await first;
    expect(records.map((r) => [r.eventId, r.outcome, r.status, r.problem, r.handlerMs === null])).toEqual([
      ['evt_dup', 'processed', 200, null, false],
      ['evt_dup', 'duplicate', 200, null, true],
      ['evt_busy', 'conflict', 409, 'in-progress', true],
      ['evt_busy', 'processed', 200, null, false],
    ]);
  });

  it('contains what onDelivery throws or rejects: the answer stands, one warning per reason', async () => {
    const logger = captureLogger();
    let calls = 0;
    const d = await start({
      logger,
      onDelivery: (record) => {
        calls++;
        if (record.status === 200) throw new Error('metrics backend down');
        return Promise.reject(new Error('metrics backend down'));
      },
    });
    expect((await d.send(delivery(issued('evt_c1')))).status).toBe(200);
    expect((await d.send(delivery(issued('evt_c2')))).status).toBe(200);
    expect((await d.send(delivery(issued('e'), { authorization: '' }))).status).toBe(401);
    // Once the third call's rejection has been handled, a second warning would be there.
    await pollUntil('onDelivery called for each of the 3 requests', () => calls === 3);
    expect(logger.messages('error').filter((m) => m.includes('onDelivery'))).toHaveLength(1);
  });

  it('tells onDelivery.onRequestStart of each request before its record, containing what it throws', async () => {
    const seen: string[] = [];
    const listener = Object.assign((record: DeliveryRecord) => void seen.push(`record ${record.status}`), {
      onRequestStart: () => {
        seen.push('start');
        if (seen.length === 1) throw new Error('gauge backend down');
      },
    });
    const d = await start({ onDelivery: listener });
    expect((await d.send(delivery(issued('evt_s1')))).status).toBe(200);
    expect((await d.send(delivery(issued('e'), { authorization: '' }))).status).toBe(401);
    expect(seen).toEqual(['start', 'record 200', 'start', 'record 401']);
  });

  it('refuses an onRequestStart that is not a function, at construction', async () => {
    const listener = Object.assign(() => undefined, { onRequestStart: 'soon' });
    await expect(door.open({ bearerTokens: [TOKEN], router, onDelivery: listener as never })).rejects.toThrow(
      /onDelivery.onRequestStart must be a function/,
    );
  });

  it('does not wait for a slow onDelivery', async () => {
    const d = await start({ onDelivery: () => new Promise(() => undefined) });
    const answer = await d.send(delivery(issued('evt_slow_hook')));
    expect(answer.status).toBe(200);
  });
});

describe('every door', () => {
  it('produces the same records for the same requests', () => {
    const [first, ...others] = DOORS.map((door) => byDoor.get(door.name) ?? []);
    expect(first).toHaveLength(ROWS.length);
    for (const records of others) expect(records).toEqual(first);
  });
});

describe.each(DOORS)('a failing onDelivery through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it('an onDelivery that throws or rejects changes nothing and escapes nowhere', async () => {
    const watch = watchProcess();
    try {
      let calls = 0;
      const router = createEventRouter().on('ag.hid_org.created', () => undefined);
      const { d } = await start({
        router,
        onDelivery: () => {
          calls++;
          if (calls % 2) throw new Error('hook');
          return Promise.reject(new Error('hook'));
        },
      });
      expect((await d.send(tokenDelivery(TOKEN, buildEvent('ag.hid_org.created')))).status).toBe(200);
      expect((await d.send(tokenDelivery(TOKEN, buildEvent('ag.hid_org.created')))).status).toBe(200);
      // pollUntil gives one more turn, so the second call's rejection, had it escaped, is reported.
      await pollUntil('onDelivery called for both requests', () => calls >= 2);
      expect(calls).toBe(2);
      expect(watch.escaped).toEqual([]);
    } finally {
      watch.stop();
    }
  });
});
