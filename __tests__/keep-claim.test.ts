// keepClaim (issue 28 fault 5, its review): a running try keeps its event and its entity while its
// handlers run, up to its timeout plus one lease, and the last try of an overrunning handler is put back.
import { createEventRouter, MemoryStore, type AnyWebhookEvent } from '../lib';
import { inboxWorkerCore, type JobDisposition } from '../lib/core/dispatch/inbox-worker-core';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery } from '../lib/inbox/queued-delivery';
import { normalizeEvent } from '../lib/events/normalize-event';
import { openTelemetryTracing } from '../lib/observability/open-telemetry-tracing';
import { buildEvent } from '../lib/testing';

function queued(id: string, time: string) {
  const envelope = buildEvent('ag.access_pass.updated', { id: 'pass-1' }, { id, time });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    const d = queued('hung', '2025-01-01T00:00:01Z');
    const seen: JobDisposition['then'][] = [];
    try {
      // Try 1 times out; then the engine keeps coming back, as BullMQ and pg-boss do after a put-back.
      seen.push((await core.run(d, 1)).then);
      // 30 leases (6 s) of tries: each is 'busy', i.e. put back without spending an attempt.
      for (let i = 0; i < 30; i++) {
        await sleep(200);
        const next = await core.run(d, 2);
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
    const d = queued('last-try', '2025-01-01T00:00:01Z');
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
});
