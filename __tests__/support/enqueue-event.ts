import type { Inbox } from '../../lib';
import { normalizeEvent } from '../../lib/events/normalize-event';
import { idempotencyKey } from '../../lib/idempotency/store-keys';
import { queuedDelivery } from '../../lib/inbox/queued-delivery';
import { buildEvent } from '../../lib/testing';

/** Queues an `ag.access_pass.issued` event with this id straight into `inbox`, as a receiver would. */
export async function enqueueEvent(inbox: Inbox, id: string): Promise<void> {
  const envelope = buildEvent('ag.access_pass.issued', {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  await inbox.enqueue(queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null));
}
