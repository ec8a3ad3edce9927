// keepClaim (issue 28 fault 5, its review): a running try keeps its event and its entity while its
// handlers run, up to its timeout plus one lease, and the last try of an overrunning handler is put back.
import { createEventRouter, MemoryStore, type AnyWebhookEvent } from '../lib';
import { inboxWorkerCore, type JobDisposition } from '../lib/inbox/worker/inbox-worker-core';
import { openTelemetryTracing } from '../lib/observability/open-telemetry-tracing';
import { overlapRouter, queuedPassUpdate } from './support/overlap-router';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('keepClaim: an overrunning ordered handler keeps the event and its entity', () => {
  it('a newer event of the same entity does not start its ordered handler while the older one still runs', async () => {
    // 'old' ignores ctx.signal, as in fault 5: it writes its state after the timeout.
    const { router, overlaps, finished, open } = overlapRouter('old');
    // Leases of 1.5 s, renewed up to timeoutMs + leaseMs (1.6 s) after the try started.
    const idempotency = { store: new MemoryStore({ logger: false }), leaseMs: 1_500 };
    const core = inboxWorkerCore(
      router,
      { idempotency, logger: false, timeoutMs: 100, attempts: 5 },
      'review',
      openTelemetryTracing,
    );
    // On the fake clock (Date and performance.now() too): the leases, the renewals and the try's
    // timeout read it, so the windows below are exact however busy the machine.
    jest.useFakeTimers();
    try {
      const running = core.run(queuedPassUpdate('old', '2025-01-01T00:00:01Z'), 1);
      await jest.advanceTimersByTimeAsync(100);
      const first = await running;
      expect(first.then).toBe('retry'); // timed out; its handler goes on, its event claim is renewed
      // Past the entity's first lease (1.5 s), within its renewals' last one (the bound's plus a lease).
      await jest.advanceTimersByTimeAsync(1_800);
      const next = core.run(queuedPassUpdate('new', '2025-01-01T00:00:02Z'), 1);
      await jest.advanceTimersByTimeAsync(100);
      const newer = await next;
      open();
      await jest.advanceTimersByTimeAsync(50);
      // 'new' is put back (the entity is held by a live try), so it never overlaps 'old' and 'old'
      // (older) never writes after 'new'.
      expect(overlaps).toEqual([]);
      expect(newer.then).toBe('putBack');
      expect(finished).toEqual(['old']);
    } finally {
      open();
      jest.useRealTimers();
    }
  });
});

describe('keepClaim: a handler that never settles does not hold its event forever', () => {
  it('the event is dead-lettered once its attempts are spent, not put back for ever', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let starts = 0;
    const router = createEventRouter().on('ag.access_pass.updated', async () => {
      starts++;
      await gate; // hangs, ignoring ctx.signal (a lost socket with no timeout, a deadlock)
    });
    const timeoutMs = 100; // lease 200 ms, renewed every 66 ms for as long as the handler hangs
    const core = inboxWorkerCore(
      router,
      { idempotency: new MemoryStore({ logger: false }), logger: false, timeoutMs, attempts: 2 },
      'review',
      openTelemetryTracing,
    );
    const d = queuedPassUpdate('hung', '2025-01-01T00:00:01Z');
    const seen: JobDisposition['then'][] = [];
    // On the fake clock (Date and performance.now() too): a renewal every 66 ms keeps a 200 ms lease
    // however busy the machine, and the clock moves on for a try's timeout as it runs.
    jest.useFakeTimers();
    const run = async (attempt: number) => {
      const next = core.run(d, attempt);
      await jest.advanceTimersByTimeAsync(timeoutMs);
      return next;
    };
    try {
      // Try 1 times out; then the engine keeps coming back, as BullMQ and pg-boss do after a put-back.
      seen.push((await run(1)).then);
      // 30 leases (6 s) of tries: each is 'busy', i.e. put back without spending an attempt.
      for (let i = 0; i < 30; i++) {
        await jest.advanceTimersByTimeAsync(200);
        const next = await run(2);
        seen.push(next.then);
        if (next.then === 'dead') break;
      }
      // The renewal stops at timeoutMs + leaseMs: the claim lapses and the tries go on, each starting
      // the hung handler anew (the documented window); the last try is put back once, then dead.
      expect(starts).toBe(3);
      expect(seen[0]).toBe('retry');
      expect(seen.at(-1)).toBe('dead');
      expect(seen.filter((s) => s === 'dead')).toHaveLength(1);
    } finally {
      open();
      jest.useRealTimers();
    }
  }, 20_000);
});

describe('keepClaim: the last try times out while its handler goes on and succeeds', () => {
  it('the event is not dead-lettered while its handler still runs (fault 5 "ends dead although its handler succeeded")', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const done: string[] = [];
    let finished!: () => void;
    const handlerDone = new Promise<void>((r) => (finished = r));
    const router = createEventRouter().on('ag.access_pass.updated', async (e: AnyWebhookEvent) => {
      await gate; // ignores ctx.signal, then succeeds
      done.push(e.id);
      finished();
    });
    const store = new MemoryStore({ logger: false });
    const core = inboxWorkerCore(
      router,
      // attempts: 1, so the first try is the last; the same holds for the 13th of the default 13.
      { idempotency: store, logger: false, timeoutMs: 100, attempts: 1 },
      'review',
      openTelemetryTracing,
    );
    const d = queuedPassUpdate('last-try', '2025-01-01T00:00:01Z');
    try {
      const last = await core.run(d, 1);
      open();
      // The handler succeeded; its key is done.
      await handlerDone;
      expect(done).toEqual(['last-try']);
      // Put back while the handler ran on; the next try finds the event done, a duplicate.
      expect(last.then).toBe('putBack');
      // (The claim is settled just after the handler returns: busy until then, bounded here.)
      let next = await core.run(d, 1);
      for (let i = 0; i < 100 && next.then === 'putBack'; i++) {
        await sleep(20);
        next = await core.run(d, 1);
      }
      expect(next).toEqual({ then: 'complete', status: 'duplicate' });
    } finally {
      open();
    }
  });

  it('without a store (idempotency: false) nothing could see a late success: the last try that times out is dead', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let starts = 0;
    const router = createEventRouter().on('ag.access_pass.updated', async () => {
      starts++;
      await gate;
    });
    const core = inboxWorkerCore(
      router,
      { idempotency: false, logger: false, timeoutMs: 100, attempts: 1 },
      'review',
      openTelemetryTracing,
    );
    try {
      expect((await core.run(queuedPassUpdate('no-store', '2025-01-01T00:00:01Z'), 1)).then).toBe('dead');
      expect(starts).toBe(1);
    } finally {
      open();
    }
  });
});
