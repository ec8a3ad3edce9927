import fc from 'fast-check';
import { Registry } from 'prom-client';
import {
  createEventRouter,
  createFetchHandler,
  MemoryStore,
  OptionsError,
  type AnyWebhookEvent,
  type DeliveryRecord,
  type EventRouter,
  type HandlerContext,
  type IdempotencyStore,
} from '../lib';
import { inboxMetrics, prometheusMetrics } from '../lib/metrics';
import { orderingGuard } from '../lib/core/dispatch/ordering-guard';
import { inboxWorkerCore } from '../lib/inbox/worker/inbox-worker-core';
import type { Inbox, JobRecord } from '../lib/inbox/inbox';
import { queuedDelivery, type QueuedDelivery } from '../lib/inbox/queued-delivery';
import { openTelemetryTracing } from '../lib/observability/open-telemetry-tracing';
import { normalizeEvent } from '../lib/events/normalize-event';
import type { ResolvedLogger } from '../lib/logger';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';
import { captureLogger } from './support/capture-logger';
import { playScenario, scenarioArbitrary, type Send } from './support/multi-instance/run-ordering-proof';

const TOKEN = 'tok_ordering';
const at = (second: number) => `2026-11-24T10:00:${String(second).padStart(2, '0')}Z`;
let passes = 0;
/** A pass no other test uses. */
const newPass = () => `pass-${++passes}`;

/** An access-pass event of `pass` at `second`, with its own id unless given one. */
const passEvent = (pass: string, second: number, id = `${pass}-${second}-${Math.random()}`) =>
  buildEvent('ag.access_pass.updated', { id: pass }, { id, time: at(second) });

/** A MemoryStore seen only through the four methods every store has. */
const bare = (): IdempotencyStore => {
  const memory = new MemoryStore({ logger: false });
  return {
    claim: (...a) => memory.claim(...a),
    markDone: (...a) => memory.markDone(...a),
    release: (...a) => memory.release(...a),
    get: (...a) => memory.get(...a),
  };
};

/** A gate a handler waits on, opened by the test: no sleeps to order events. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

function receiver(
  router: EventRouter,
  store: IdempotencyStore = new MemoryStore({ logger: false }),
  extra = {},
  storeSettings: { timeoutMs?: number; leaseMs?: number } = {},
) {
  const records: DeliveryRecord[] = [];
  const handle = createFetchHandler({
    bearerTokens: [TOKEN],
    router,
    idempotency: { store, ...storeSettings },
    logger: false,
    onDelivery: (record) => void records.push(record),
    ...extra,
  });
  const send = async (event: unknown) => {
    const response = await handle(
      new Request('http://localhost/webhooks', {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(event),
      }),
    );
    const text = await response.text();
    return {
      status: response.status,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      headers: response.headers,
    };
  };
  return { send, records };
}

/** A router whose ordered handler logs the ids it saw and fails on cue (`failing`). */
function orderedRouter(failing = new Set<string>()) {
  const seen: string[] = [];
  const router = createEventRouter().on(
    'ag.access_pass.*',
    (event: AnyWebhookEvent) => {
      seen.push(event.id);
      if (failing.has(event.id)) throw new Error('the pass store said no');
    },
    { ordering: 'newest-wins' },
  );
  return { router, seen };
}

describe("on(type, handler, { ordering: 'newest-wins' })", () => {
  it('skips an event older than the newest processed one: 200 stale, and says so in the record', async () => {
    const { router, seen } = orderedRouter();
    const { send, records } = receiver(router);
    const pass = newPass();
    const newer = passEvent(pass, 20);
    const older = passEvent(pass, 10);
    expect((await send(newer)).body.status).toBe('processed');
    const stale = await send(older);
    expect(stale).toMatchObject({ status: 200, body: { id: older.id, status: 'stale' } });
    expect(seen).toEqual([newer.id]);
    expect(records.map((r) => [r.outcome, r.ordering])).toEqual([
      ['processed', 'newest'],
      ['stale', 'stale'],
    ]);
    // The stale event is done: delivered again, it is a duplicate, and still nothing runs.
    expect((await send(older)).body.status).toBe('duplicate');
    expect(seen).toEqual([newer.id]);
  });

  it('runs events that come in order, each once', async () => {
    const { router, seen } = orderedRouter();
    const { send } = receiver(router);
    const pass = newPass();
    const events = [1, 2, 3].map((s) => passEvent(pass, s));
    for (const event of events) expect((await send(event)).body.status).toBe('processed');
    expect(seen).toEqual(events.map((e) => e.id));
  });

  it('orders by the instant, whatever the offset and fraction the time was written with', async () => {
    const { router, seen } = orderedRouter();
    const { send } = receiver(router);
    const pass = newPass();
    // Written as sent, not as the test kit writes times (milliseconds, in UTC).
    const later = { ...passEvent(pass, 0), time: '2026-11-24T11:00:00.0005+01:00' };
    const earlier = { ...passEvent(pass, 0), time: '2026-11-24T10:00:00.0004999Z' };
    const same = { ...passEvent(pass, 0, `${pass}-0`), time: '2026-11-24T10:00:00.000500Z' };
    await send(later);
    expect((await send(earlier)).body.status).toBe('stale');
    // The same instant as `later`, written otherwise, with an id that sorts before its (a prefix).
    expect(later.id.startsWith(same.id)).toBe(true);
    expect((await send(same)).body.status).toBe('stale');
    expect(seen).toEqual([later.id]);
  });

  it('breaks a tie of times by the event id, so arrival order does not matter', async () => {
    for (const [first, second] of [
      ['b', 'a'],
      ['a', 'b'],
    ] as const) {
      const { router, seen } = orderedRouter();
      const { send } = receiver(router);
      const pass = newPass();
      await send(passEvent(pass, 5, `${pass}-${first}`));
      await send(passEvent(pass, 5, `${pass}-${second}`));
      // Either way round, `b` is the newest, and is the last the handler saw.
      expect(seen.at(-1)).toBe(`${pass}-b`);
      expect(seen).toEqual(first === 'b' ? [`${pass}-b`] : [`${pass}-a`, `${pass}-b`]);
    }
  });

  it('advances nothing when the handler fails: the failed event is retried and still wins over older ones', async () => {
    const pass = newPass();
    const newer = passEvent(pass, 30);
    const older = passEvent(pass, 20);
    const oldest = passEvent(pass, 10);
    const failing = new Set([newer.id]);
    const { router, seen } = orderedRouter(failing);
    const { send, records } = receiver(router);
    expect((await send(newer)).status).toBe(500);
    // Not advanced: an older event still runs.
    expect((await send(older)).body.status).toBe('processed');
    failing.clear();
    expect((await send(newer)).body.status).toBe('processed');
    expect((await send(oldest)).body.status).toBe('stale');
    expect(seen).toEqual([newer.id, older.id, newer.id]);
    expect(records.map((r) => r.status)).toEqual([500, 200, 200, 200]);
  });

  it('holds a second event of the entity off with 409 + Retry-After while the first runs; other entities go on', async () => {
    const held = gate();
    const started = gate();
    const pass = newPass();
    const firstEvent = passEvent(pass, 1);
    const router = createEventRouter().on(
      'ag.access_pass.*',
      async (event: AnyWebhookEvent) => {
        if (event.id === firstEvent.id) {
          started.open();
          await held.opened;
        }
      },
      { ordering: 'newest-wins' },
    );
    const { send, records } = receiver(router, undefined, { retryAfterSeconds: 7 });
    const first = send(firstEvent);
    await started.opened;
    const second = await send(passEvent(pass, 2));
    expect(second.status).toBe(409);
    expect(second.headers.get('retry-after')).toBe('7');
    expect(second.body).toMatchObject({ type: expect.stringMatching(/entity-in-progress$/) });
    expect((await send(passEvent(newPass(), 2))).status).toBe(200);
    held.open();
    expect((await first).status).toBe(200);
    // Its claim was given back: the Service's retry runs it.
    expect((await send(passEvent(pass, 2))).status).toBe(200);
    expect(records.map((r) => r.outcome)).toEqual(['conflict', 'processed', 'processed', 'processed']);
  });

  it('lets a handler without the option see every event, and skips only the ordered one (recorded)', async () => {
    const ordered: string[] = [];
    const every: string[] = [];
    const router = createEventRouter()
      .on('ag.access_pass.updated', (e: AnyWebhookEvent) => void ordered.push(e.id), {
        ordering: 'newest-wins',
      })
      .on('ag.access_pass.updated', (e: AnyWebhookEvent) => void every.push(e.id), { name: 'every' });
    const { send, records } = receiver(router);
    const pass = newPass();
    const events = [passEvent(pass, 9), passEvent(pass, 3), passEvent(pass, 6), passEvent(pass, 12)];
    const answers = [];
    for (const event of events) answers.push((await send(event)).body.status);
    expect(answers).toEqual(['processed', 'processed', 'processed', 'processed']);
    expect(every).toEqual(events.map((e) => e.id));
    expect(ordered).toEqual([events[0]!.id, events[3]!.id]);
    expect(records.map((r) => r.ordering)).toEqual(['newest', 'stale', 'stale', 'newest']);
  });

  it('never holds back an event without an entity or without a time', async () => {
    const seen: string[] = [];
    const router = createEventRouter().on(
      ['ag.access_pass.updated', 'ag.hid_org.created'],
      (e: AnyWebhookEvent) => void seen.push(e.id),
      { ordering: 'newest-wins' },
    );
    const { send, records } = receiver(router);
    const pass = newPass();
    const timeless = (second: number) => {
      const event: Record<string, unknown> = { ...passEvent(pass, second) };
      delete event.time;
      return event;
    };
    const events = [
      passEvent(pass, 50),
      timeless(10),
      buildEvent('ag.hid_org.created', {}, { time: at(50) }),
      buildEvent('ag.hid_org.created', {}, { time: at(10) }),
    ];
    for (const event of events) expect((await send(event)).body.status).toBe('processed');
    expect(seen).toEqual(events.map((e) => e.id));
    expect(records.map((r) => r.ordering)).toEqual(['newest', undefined, undefined, undefined]);
  });

  it('answers 503, unacknowledged, when the store cannot lease the entity, or takes too long', async () => {
    let mode: 'reject' | 'hang' | 'answer' = 'reject';
    // Not a MemoryStore, so its calls are bounded by idempotency.timeoutMs as a shared store's are.
    const broken = {
      ...bare(),
      leaseEntity: () =>
        mode === 'reject'
          ? Promise.reject(new Error('down'))
          : mode === 'hang'
            ? new Promise(() => undefined)
            : Promise.resolve('leased'),
      advanceEntity: () => Promise.resolve(true),
      releaseEntity: () => Promise.resolve(),
    } as IdempotencyStore;
    const { router, seen } = orderedRouter();
    const { send, records } = receiver(router, broken, {}, { timeoutMs: 100 });
    const pass = newPass();
    const rejected = passEvent(pass, 1);
    expect((await send(rejected)).status).toBe(503);
    mode = 'hang';
    expect((await send(passEvent(pass, 2))).status).toBe(503);
    expect(seen).toEqual([]);
    expect(records.map((r) => [r.outcome, r.problem])).toEqual([
      ['store-unavailable', 'store-unavailable'],
      ['store-unavailable', 'store-unavailable'],
    ]);
    // The event's own claim was given back: once the store answers, the retry runs.
    mode = 'answer';
    expect((await send(rejected)).status).toBe(200);
    expect(seen).toEqual([rejected.id]);
  });

  it('gives back a lease that landed after idempotency.timeoutMs, so the entity is not held for a whole lease', async () => {
    const memory = new MemoryStore({ logger: false });
    const landed = gate();
    const released = gate();
    let slow = true;
    const store = {
      ...bare(),
      leaseEntity: async (...a: Parameters<MemoryStore['leaseEntity']>) => {
        if (slow) await landed.opened;
        return memory.leaseEntity(...a);
      },
      advanceEntity: (...a: Parameters<MemoryStore['advanceEntity']>) => memory.advanceEntity(...a),
      releaseEntity: async (...a: Parameters<MemoryStore['releaseEntity']>) => {
        await memory.releaseEntity(...a);
        released.open();
      },
    } as IdempotencyStore;
    const { router, seen } = orderedRouter();
    const { send } = receiver(router, store, {}, { timeoutMs: 50 });
    const pass = newPass();
    expect((await send(passEvent(pass, 1))).status).toBe(503);
    landed.open();
    await released.opened;
    slow = false;
    const next = passEvent(pass, 2);
    expect((await send(next)).status).toBe(200);
    expect(seen).toEqual([next.id]);
  });

  it('counts stale deliveries and the guard’s decisions in the metrics', async () => {
    const registry = new Registry();
    const { router } = orderedRouter();
    const { send } = receiver(router, undefined, { onDelivery: prometheusMetrics({ registry }) });
    const pass = newPass();
    await send(passEvent(pass, 2));
    await send(passEvent(pass, 1));
    const text = await registry.metrics();
    expect(text).toMatch(/ordering_total\{type="ag.access_pass.updated",decision="newest"\} 1/);
    expect(text).toMatch(/ordering_total\{type="ag.access_pass.updated",decision="stale"\} 1/);
    expect(text).toMatch(/requests_total\{type="ag.access_pass.updated",outcome="stale"\} 1/);
  });
});

describe("the receiver's entity marks", () => {
  it("are kept past the Service's 6-hour retry window, with a margin (idempotency.retentionMs, 7 h)", async () => {
    const { router, seen } = orderedRouter();
    const { send } = receiver(router);
    const realNow = Date.now.bind(Date);
    let shift = 0;
    const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + shift);
    try {
      const pass = newPass();
      const newer = passEvent(pass, 5);
      expect((await send(newer)).status).toBe(200);
      // The Service's last retry of an older event, 6 h after the newer one succeeded, and a margin.
      shift = 6.5 * 3_600_000;
      expect((await send(passEvent(pass, 1))).body).toMatchObject({ status: 'stale' });
      // Past the window nothing older can come from the Service any more: the mark is let go.
      shift = 7 * 3_600_000 + 60_000;
      expect((await send(passEvent(pass, 2))).body).toMatchObject({ status: 'processed' });
      expect(seen).toHaveLength(2);
      expect(seen[0]).toBe(newer.id);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('orderingGuard, as a queue worker calls it', () => {
  const options = {
    scope: 'worker',
    leaseMs: 60_000,
    timeoutMs: 30_000,
    retentionMs: 60_000,
    storeTimeoutMs: 1_000,
    maxFutureSkewMs: 300_000,
  };
  const silent = { debug() {}, info() {}, warn() {}, error() {} } as unknown as ResolvedLogger;
  const normalized = (envelope: ReturnType<typeof passEvent>) =>
    normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);

  it('answers ran, stale and busy, and advances only after success', async () => {
    const guard = orderingGuard(
      { ...options, store: new MemoryStore({ logger: false }) },
      silent,
      () => undefined,
    );
    const ran: string[] = [];
    const { router } = orderedRouter();
    const matched = router.match('ag.access_pass.updated');
    const ok = async (handlers: readonly unknown[]) => (
      ran.push(String(handlers.length)),
      { ok: true as const }
    );
    const pass = newPass();
    const held = gate();
    const first = guard.run(normalized(passEvent(pass, 5)), matched, async (h) => {
      await held.opened;
      return ok(h);
    });
    expect(await guard.run(normalized(passEvent(pass, 6)), matched, ok)).toEqual({ kind: 'busy' });
    held.open();
    expect(await first).toEqual({ kind: 'ran', outcome: { ok: true }, ordering: 'newest' });
    expect(await guard.run(normalized(passEvent(pass, 4)), matched, ok)).toEqual({ kind: 'stale' });
    const failed = { ok: false as const, errors: [new Error('no')], retryLater: undefined };
    expect(await guard.run(normalized(passEvent(pass, 7)), matched, async () => failed)).toMatchObject({
      kind: 'ran',
      outcome: { ok: false },
    });
    // The failure advanced nothing: 6 is still newer than the newest processed (5).
    expect(await guard.run(normalized(passEvent(pass, 6)), matched, ok)).toMatchObject({ kind: 'ran' });
    expect(ran).toEqual(['1', '1']);
  });

  // The receiver's path and the worker's alike: a handler that ignores ctx.signal keeps its entity.
  it('renews the entity lease while ordered handlers run past it, up to timeoutMs + leaseMs', async () => {
    // On the fake clock (Date too): the store's leases and the renewals' interval read it, so the
    // windows below are exact however busy the machine.
    jest.useFakeTimers();
    const held = gate();
    try {
      const guard = orderingGuard(
        { ...options, leaseMs: 1_200, timeoutMs: 100, store: new MemoryStore({ logger: false }) },
        silent,
        () => undefined,
      );
      const { router } = orderedRouter();
      const matched = router.match('ag.access_pass.updated');
      const ok = async () => ({ ok: true as const });
      const pass = newPass();
      const first = guard.run(normalized(passEvent(pass, 5)), matched, async () => {
        await held.opened;
        return { ok: true as const };
      });
      // Past the first lease (1.2 s), within the renewals (up to 1.3 s, each for 1.2 s more).
      await jest.advanceTimersByTimeAsync(1_500);
      expect(await guard.run(normalized(passEvent(pass, 6)), matched, ok)).toEqual({ kind: 'busy' });
      // Past the bound and the last renewal's lease: the entity is free, the newer event runs.
      await jest.advanceTimersByTimeAsync(1_500);
      expect(await guard.run(normalized(passEvent(pass, 6)), matched, ok)).toMatchObject({
        kind: 'ran',
        ordering: 'newest',
      });
      held.open();
      await first;
    } finally {
      held.open();
      jest.useRealTimers();
    }
  });
});

describe('an event whose time lies past its receipt plus maxFutureSkewMs (issue 28)', () => {
  const T0 = Date.parse('2026-11-24T12:00:00Z');
  const MINUTE = 60_000;
  const FAR = '9999-12-31T23:59:59.999Z';
  const iso = (ms: number) => new Date(ms).toISOString();
  /** An access-pass event of `pass` dated `time` exactly as written. */
  const dated = (pass: string, time: string) => ({ ...passEvent(pass, 0), time });
  let clock = T0;
  let spy: jest.SpyInstance | undefined;
  beforeEach(() => {
    clock = T0;
    // The receipt is read from the clock: held still, so no outcome depends on the machine's speed.
    spy = jest.spyOn(Date, 'now').mockImplementation(() => clock);
  });
  afterEach(() => spy?.mockRestore());

  it('runs its handlers, but holds the mark at that bound: later real events still run; logged once a minute, counted', async () => {
    const registry = new Registry();
    const metrics = prometheusMetrics({ registry });
    const logger = captureLogger();
    const { router, seen } = orderedRouter();
    const records: DeliveryRecord[] = [];
    const { send } = receiver(router, undefined, {
      maxFutureSkewMs: MINUTE,
      logger,
      onDelivery: Object.assign((r: DeliveryRecord) => void (records.push(r), metrics(r)), {
        onBookkeeping: metrics.onBookkeeping,
      }),
    });
    const pass = newPass();
    const far = dated(pass, FAR);
    expect((await send(far)).body.status).toBe('processed');
    // Held at receipt + 1 min, not at 9999: an event dated within that minute is still older.
    expect((await send(dated(pass, iso(T0 + MINUTE / 2)))).body.status).toBe('stale');
    // Ten minutes on, a real event (dated five minutes ago) runs: the entity is not frozen.
    clock = T0 + 10 * MINUTE;
    const real = dated(pass, iso(T0 + 5 * MINUTE));
    expect((await send(real)).body.status).toBe('processed');
    const again = [dated(pass, FAR), dated(pass, FAR)];
    for (const event of again) {
      // Each received a second after the last, so each is held at a later bound than the one before.
      clock += 1_000;
      expect((await send(event)).body.status).toBe('processed');
    }
    expect(seen).toEqual([far.id, real.id, ...again.map((e) => e.id)]);
    expect(records.map((r) => r.ordering)).toEqual(['newest', 'stale', 'newest', 'newest', 'newest']);
    // Three future times; one line per minute says so (the third is held back and counted on the next).
    const lines = logger.records.filter((r) => r.meta.reason === 'future-time');
    expect(lines.map((r) => [r.level, r.meta.eventId, r.meta.maxFutureSkewMs])).toEqual([
      ['warn', far.id, MINUTE],
      ['warn', again[0]?.id, MINUTE],
    ]);
    expect(lines[0]?.message).toMatch(
      /later than its receipt plus maxFutureSkewMs.*Check the sender's clock/,
    );
    expect(await registry.metrics()).toMatch(/^service_webhooks_ordering_future_time_total 3$/m);
  });

  it('bounds by 5 minutes unless told otherwise, and 0 holds every future time at its receipt', async () => {
    const { router, seen } = orderedRouter();
    const byDefault = receiver(router);
    const pass = newPass();
    await byDefault.send(dated(pass, FAR));
    clock = T0 + 5 * MINUTE + 1_000;
    expect((await byDefault.send(dated(pass, iso(T0 + 5 * MINUTE - 1_000)))).body.status).toBe('stale');
    expect((await byDefault.send(dated(pass, iso(T0 + 5 * MINUTE + 1)))).body.status).toBe('processed');
    const exact = receiver(router, undefined, { maxFutureSkewMs: 0 });
    const other = newPass();
    clock = T0;
    await exact.send(dated(other, iso(T0 + 1)));
    expect((await exact.send(dated(other, iso(T0)))).body.status).toBe('stale');
    clock = T0 + 2;
    expect((await exact.send(dated(other, iso(T0 + 2)))).body.status).toBe('processed');
    expect(seen).toHaveLength(4);
  });

  it("in a worker, is bounded by the queued delivery's receivedAt: a replay long after is judged as on arrival", async () => {
    const store = new MemoryStore({ logger: false });
    const { router, seen } = orderedRouter();
    const jobs: JobRecord[] = [];
    const registry = new Registry();
    const inbox = { name: 'skew', engine: 'bullmq', status: async () => undefined } as unknown as Inbox;
    const counted = inboxMetrics({ inbox, registry });
    const core = inboxWorkerCore(
      router,
      {
        idempotency: store,
        logger: false,
        maxFutureSkewMs: MINUTE,
        onJob: (r) => void (jobs.push(r), counted.onJob(r)),
      },
      'startWorker',
      openTelemetryTracing,
    );
    const pass = newPass();
    const R = T0 - 30 * 24 * 60 * MINUTE; // a month before the worker runs these
    const job = (time: string, receivedAt: number) => {
      const envelope = dated(pass, time);
      const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
      return {
        ...queuedDelivery(`k-${envelope.id}`, event, () => undefined, null),
        receivedAt: iso(receivedAt),
      };
    };
    const early = job(iso(R + MINUTE / 2), R);
    const week = job(iso(R + 7 * 24 * 60 * MINUTE), R + 7 * 24 * 60 * MINUTE);
    // Dated 9999, received a month ago (a dead letter replayed now): held at R + 2 min, so older than
    // `week`, as it was when it arrived; judged by the time it runs, it would pass `week` and beyond.
    const far = job(FAR, R + MINUTE);
    const recent = job(iso(T0 - MINUTE), T0 - MINUTE);
    const outcomes = [];
    for (const d of [early, week, far, recent]) outcomes.push((await core.run(d, 1)).then === 'complete');
    expect(outcomes).toEqual([true, true, true, true]);
    expect(jobs.map((r) => [r.outcome, r.futureTime ?? false])).toEqual([
      ['processed', false],
      ['processed', false],
      ['stale', true],
      ['processed', false],
    ]);
    expect(seen).toEqual([early.id, week.id, recent.id]);
    expect(await registry.metrics()).toMatch(
      /^service_webhooks_inbox_future_time_total\{queue="skew",type="ag.access_pass.updated"\} 1$/m,
    );
    store.close();
  });
});

describe('an ordered handler past timeoutMs', () => {
  it('is answered 503, keeps the entity until it ends, and its success still advances it', async () => {
    const held = gate();
    const pass = newPass();
    const slow = passEvent(pass, 5);
    const router = createEventRouter().on(
      'ag.access_pass.*',
      async (event: AnyWebhookEvent) => {
        if (event.id === slow.id) await held.opened;
      },
      { ordering: 'newest-wins' },
    );
    const { send } = receiver(router, undefined, { timeoutMs: 50 }, { leaseMs: 60_000 });
    expect((await send(slow)).status).toBe(503);
    expect((await send(passEvent(pass, 6))).status).toBe(409);
    held.open();
    // Bounded wait for the handler to finish and the entity to advance: a redelivery is then a duplicate.
    let again = await send(slow);
    for (let i = 0; i < 50 && again.status !== 200; i++) again = await send(slow);
    expect(again.body.status).toBe('duplicate');
    expect((await send(passEvent(pass, 4))).body.status).toBe('stale');
  });
});

describe('a store without entity operations', () => {
  it('still serves handlers without ordering', async () => {
    const seen: string[] = [];
    const router = createEventRouter().on(
      'ag.access_pass.updated',
      (e: AnyWebhookEvent) => void seen.push(e.id),
    );
    const { send } = receiver(router, bare());
    const pass = newPass();
    await send(passEvent(pass, 2));
    await send(passEvent(pass, 1));
    expect(seen).toHaveLength(2);
  });

  it.each([
    [
      'a store without them',
      bare,
      /no entity operations \(leaseEntity, advanceEntity, releaseEntity\); use MemoryStore, RedisStore or PostgresStore/,
    ],
    ['idempotency: false', () => false as const, /needs an idempotency store; remove idempotency: false/],
  ])('fails at construction with an ordered handler and %s, saying what to do', (_name, store, message) => {
    const { router } = orderedRouter();
    const build = () =>
      createFetchHandler({ bearerTokens: [TOKEN], router, idempotency: store(), logger: false });
    expect(build).toThrow(OptionsError);
    expect(build).toThrow(message);
  });

  it.each([
    ['a store without them', bare],
    ['idempotency: false', () => false as const],
  ])(
    'with an inbox, takes an ordered handler and %s: the receiver only queues, the worker checks its own store (issue 21)',
    async (_name, store) => {
      const { router, seen } = orderedRouter();
      const queued: QueuedDelivery[] = [];
      const inbox = {
        enqueue: (delivery: QueuedDelivery) => Promise.resolve(void queued.push(delivery)),
        startWorker: () => Promise.reject(new Error('not in this test')),
        deadLetters: () => Promise.resolve([]),
        replay: () => Promise.resolve(false),
      } as unknown as Inbox;
      const { send } = receiver(router, undefined, { idempotency: store(), inbox });
      expect((await send(passEvent(newPass(), 1))).status).toBe(200);
      expect([queued.length, seen]).toEqual([1, []]);
      // The worker runs the ordered handler: there a store without entity operations fails at start.
      const worker = () =>
        inboxWorkerCore(router, { idempotency: bare(), logger: false }, 'startWorker', openTelemetryTracing);
      expect(worker).toThrow(OptionsError);
      expect(worker).toThrow(/no entity operations \(leaseEntity, advanceEntity, releaseEntity\)/);
    },
  );

  it('answers 500, unacknowledged, for an ordered handler registered after construction', async () => {
    const router = createEventRouter();
    const { send } = receiver(router, bare());
    router.on('ag.access_pass.updated', () => undefined, { ordering: 'newest-wins' });
    expect((await send(passEvent(newPass(), 1))).status).toBe(500);
  });
});

describe('the ordering property on MemoryStore, three receivers sharing it in one process', () => {
  const SEED = Number(process.env.PROPERTY_SEED ?? Date.now() % 1_000_000);
  const RUNS = Number(process.env.PROPERTY_RUNS ?? 100);

  it(`holds newest-wins for every interleaving tried (seed ${SEED}, ${RUNS} runs)`, async () => {
    const ledger: string[] = [];
    const store = new MemoryStore({ logger: false });
    const handler =
      (name: string, instance: number) => async (event: AnyWebhookEvent, ctx: HandlerContext) => {
        const line = (what: string) => ledger.push(`${what} ${name} ${event.id} ${instance}`);
        line('start');
        const delay = Number(ctx.header('x-proof-delay') ?? 0);
        if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
        if (ctx.header('x-proof-fail') === '1') {
          line('fail');
          throw new Error('a failure the proof injected');
        }
        line('ok');
      };
    const receivers = [0, 1, 2].map((instance) =>
      createFetchHandler({
        bearerTokens: [TOKEN],
        idempotency: store,
        logger: false,
        router: createEventRouter()
          .on('ag.access_pass.*', handler('pass', instance), { ordering: 'newest-wins' })
          .on('ag.card_template.updated', handler('template', instance), { ordering: 'newest-wins' })
          .on('ag.card_template.updated', handler('every', instance), { name: 'every' }),
      }),
    );
    const send: Send = async (instance, body, headers) => {
      const receive = receivers[instance % receivers.length] as (typeof receivers)[number];
      const response = await receive(
        new Request('http://localhost/webhooks', {
          method: 'POST',
          headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}`, ...headers },
          body,
        }),
      );
      return { status: response.status, answer: (await response.json()) as { status?: string } };
    };
    const total = { stale: 0, conflicts: 0, failures: 0 };
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        ledger.length = 0;
        const figures = await playScenario(scenario, `memory-${SEED}-${++run}`, send, () =>
          ledger.join('\n'),
        );
        total.stale += figures.stale;
        total.conflicts += figures.conflicts;
        total.failures += figures.failures;
      }),
      { seed: SEED, numRuns: RUNS },
    );
    console.log(
      `[ordering property] ${JSON.stringify({ store: 'memory', seed: SEED, runs: run, ...total })}`,
    );
    expect(total.stale).toBeGreaterThan(0);
    expect(total.conflicts).toBeGreaterThan(0);
    expect(total.failures).toBeGreaterThan(0);
  }, 60_000);
});
