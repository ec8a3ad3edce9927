// Review repro (issue 21): a dead letter replayed after the worker's fixed 7 h entity retention runs its
// ordered handler although a newer event of the entity already succeeded. Expected to FAIL today.
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

it('a replayed dead letter older than the entity newest processed event is stale, however late the replay', async () => {
  let broken = true;
  const written: string[] = [];
  const router = createEventRouter().on(
    'ag.access_pass.updated',
    async (e: AnyWebhookEvent) => {
      if (broken && e.id === 'old') throw new Error('a bug, fixed tomorrow');
      written.push(e.id);
    },
    { ordering: 'newest-wins' },
  );
  const store = new MemoryStore({ logger: false });
  const core = inboxWorkerCore(router, { idempotency: store, attempts: 1, logger: false }, 'review', openTelemetryTracing);
  const realNow = Date.now.bind(Date);
  let shift = 0;
  const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + shift);
  try {
    expect((await core.run(queued('old', '2026-01-01T10:00:00Z'), 1)).then).toBe('dead');
    expect(await core.run(queued('new', '2026-01-01T10:05:00Z'), 1)).toEqual({ then: 'complete', status: 'processed' });
    broken = false;
    shift = 8 * 3_600_000; // the next morning: the bug is fixed, the dead letter replayed
    const replayed = await core.run(queued('old', '2026-01-01T10:00:00Z'), 1);
    expect(replayed).toEqual({ then: 'complete', status: 'stale' });
    expect(written).toEqual(['new']);
  } finally {
    spy.mockRestore();
    store.close?.();
  }
});
