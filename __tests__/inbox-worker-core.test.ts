// The shared worker core: what a try comes to (retry, dead letter), whatever the engine.
import { createEventRouter, MemoryStore, type AnyWebhookEvent } from '../lib';
import { inboxWorkerCore } from '../lib/core/dispatch/inbox-worker-core';
import { eventPosition } from '../lib/core/dispatch/event-position';
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

describe('inboxWorkerCore: the idempotency option, as the receiver takes it', () => {
  it("takes the receiver's { store, scope }: ordered handlers' entities are keyed by that scope", async () => {
    const store = new MemoryStore({ logger: false });
    const ran: string[] = [];
    const router = createEventRouter().on(
      'ag.access_pass.updated',
      (e: AnyWebhookEvent) => void ran.push(e.id),
      { ordering: 'newest-wins' },
    );
    const d = queued('scoped', '2025-01-01T00:00:05Z');
    // Another worker of the 'shop' receiver holds the entity, under the key that receiver uses.
    const event = normalizeEvent(d.envelope as never, (d.envelope as { data: unknown }).data, d.envelope);
    const entity = event.entity!;
    const holder = await store.leaseEntity(
      idempotencyKey('shop', entity.kind, entity.id),
      'another-try',
      60_000,
      eventPosition({ id: 'earlier', time: '2025-01-01T00:00:01Z' })!,
    );
    expect(holder).toBe('leased');
    const options = { logger: false as const, timeoutMs: 10_000 };
    const shop = inboxWorkerCore(
      router,
      { ...options, idempotency: { store, scope: 'shop' } },
      'w',
      openTelemetryTracing,
    );
    expect(await shop.run(d, 1)).toMatchObject({ then: 'putBack' });
    expect(ran).toEqual([]);
    // A worker of the unscoped receiver (a bare store: scope '') is not held by the shop's entity.
    const bare = inboxWorkerCore(router, { ...options, idempotency: store }, 'w', openTelemetryTracing);
    expect(await bare.run(d, 1)).toMatchObject({ then: 'complete', status: 'processed' });
    expect(ran).toEqual(['scoped']);
    store.close();
  });
});
