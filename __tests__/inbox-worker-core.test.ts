// The shared worker core: what a try comes to (retry, dead letter), whatever the engine.
import { createEventRouter, MemoryStore, type AnyWebhookEvent } from '../lib';
import { inboxWorkerCore } from '../lib/core/dispatch/inbox-worker-core';
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

describe('inboxWorkerCore: a busy try is put back, never dead-lettered', () => {
  it('an entity held by another job puts the job back without spending its last attempt (no dead letter)', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const ran: string[] = [];
    const router = createEventRouter().on(
      'ag.access_pass.updated',
      async (e: AnyWebhookEvent) => {
        if (e.id === 'b') {
          started();
          await gate;
        }
        ran.push(e.id);
      },
      { ordering: 'newest-wins' },
    );
    const core = inboxWorkerCore(
      router,
      { idempotency: new MemoryStore(), attempts: 2, logger: false, timeoutMs: 10_000 },
      'review',
      openTelemetryTracing,
    );
    const first = core.run(queued('b', '2025-01-01T00:00:01Z'), 1);
    await running;
    // A newer event of the same entity, on its 2nd (= last) try, while b holds the entity.
    const second = await core.run(queued('c', '2025-01-01T00:00:02Z'), 2);
    open();
    await first;
    // No handler failed: the doc of OrderingGuard says busy "put[s] it back for later without
    // counting a failure of the handlers". Dead-lettering it means it is never run automatically.
    expect(second.then).toBe('putBack');
    expect(ran).toEqual(['b']);
  });

  it('a try of an event whose earlier try still holds its claim is put back, not dead-lettered, on the last attempt', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const router = createEventRouter().on('ag.access_pass.updated', async () => {
      started();
      await gate;
    });
    const core = inboxWorkerCore(
      router,
      { idempotency: new MemoryStore(), attempts: 2, logger: false, timeoutMs: 10_000 },
      'review',
      openTelemetryTracing,
    );
    const d = queued('x', '2025-01-01T00:00:01Z');
    const first = core.run(d, 1); // e.g. a stalled job BullMQ re-ran, or a timed-out try still running
    await running;
    const second = await core.run(d, 2);
    open();
    expect(await first).toMatchObject({ then: 'complete' });
    expect(second.then).not.toBe('dead');
  });
});
