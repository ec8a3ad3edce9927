import { createEventRouter, type Inbox } from '../../lib';
import { normalizeEvent } from '../../lib/events/normalize-event';
import { idempotencyKey } from '../../lib/idempotency/store-keys';
import { queuedDelivery, type QueuedDelivery } from '../../lib/inbox/queued-delivery';
import { buildEvent } from '../../lib/testing';
import { eventually } from './inbox-engines';

/** The queued delivery of an `ag.access_pass.issued` event `id` with these data fields. */
export function issuedDelivery(id: string, data: Record<string, unknown> = {}): QueuedDelivery {
  const envelope = buildEvent('ag.access_pass.issued', data, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

/**
 * Makes these deliveries dead letters of `inbox` the way production does: queued, then tried once by
 * a worker whose handler fails with `error`. Resolves when the inbox counts `dead` dead letters.
 */
export async function makeDeadLetters(
  inbox: Inbox,
  deliveries: readonly QueuedDelivery[],
  dead: number,
  error = 'the CRM is down',
): Promise<void> {
  for (const d of deliveries) await inbox.enqueue(d);
  const router = createEventRouter().onAny(function crmSync() {
    throw new Error(error);
  });
  const worker = await inbox.startWorker(router, { attempts: 1, concurrency: 8, logger: false });
  try {
    await eventually(`${dead} dead letters`, async () => (await inbox.status()).dead === dead, 60_000);
  } finally {
    await worker.close();
  }
}
