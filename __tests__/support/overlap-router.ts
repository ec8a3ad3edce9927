import { createEventRouter, type AnyWebhookEvent } from '../../lib';
import { normalizeEvent } from '../../lib/events/normalize-event';
import { queuedDelivery } from '../../lib/inbox/queued-delivery';
import { idempotencyKey } from '../../lib/idempotency/store-keys';
import { buildEvent } from '../../lib/testing';

/** A queued `ag.access_pass.updated` of one access pass (one entity), with its id and `time`. */
export function queuedPassUpdate(id: string, time: string) {
  const envelope = buildEvent('ag.access_pass.updated', { id: 'pass-1' }, { id, time });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

/**
 * A router with one ordered (newest-wins) handler of `ag.access_pass.updated` that records which
 * events started while another ran (`overlaps`) and the order they finished in; the event `slowId`
 * waits, ignoring ctx.signal, until `open()` (as a handler that overruns its try does).
 */
export function overlapRouter(slowId: string) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const running = new Set<string>();
  const overlaps: string[] = [];
  const finished: string[] = [];
  const router = createEventRouter().on(
    'ag.access_pass.updated',
    async (e: AnyWebhookEvent) => {
      if (running.size > 0) overlaps.push(`${e.id} started while ${[...running].join()} ran`);
      running.add(e.id);
      if (e.id === slowId) await gate;
      running.delete(e.id);
      finished.push(e.id);
    },
    { ordering: 'newest-wins' },
  );
  return { router, overlaps, finished, open };
}
