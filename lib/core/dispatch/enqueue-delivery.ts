import type { AnyWebhookEvent } from '../../events/webhook-event';
import type { Inbox } from '../../inbox/inbox';
import { queuedDelivery } from '../../inbox/queued-delivery';
import type { ResolvedLogger } from '../../logger';
import type { Outcome } from './run-handlers';
import { withTimeout } from '../../with-timeout';
import { InboxFull } from '../../inbox/inbox-full';

/**
 * Puts a claimed event in the inbox, bounded by `storeTimeoutMs`, as an outcome the idempotency
 * claim is settled with: `ok` (the key is done, so a redelivery is answered 200 without a second
 * enqueue) or not (the claim is released and the Service retries). An enqueue that lands after the
 * bound is harmless: the job id is the key's, so the retry's enqueue adds nothing. Never rejects.
 */
export async function enqueueDelivery(
  inbox: Inbox,
  key: string,
  event: Pick<AnyWebhookEvent, 'id' | 'type' | 'source' | 'time' | 'raw'>,
  header: (name: string) => string | undefined,
  storeTimeoutMs: number,
  log: ResolvedLogger,
  /** The trace active at the delivery, kept so the job's span links back to it; null untraced. */
  traceparent: string | null,
  /** Set for a quarantined event a strict receiver refused for spec rules 2–5. */
  checkRules?: true,
  /** The body text `event.raw` was parsed from, queued as is; without it the envelope is written again. */
  envelopeText?: string,
): Promise<Outcome> {
  try {
    const delivery = queuedDelivery(key, event, header, traceparent, envelopeText);
    if (checkRules === true) delivery.checkRules = true;
    // A synchronous throw of enqueue() lands in the catch below like a rejection does.
    await withTimeout(inbox.enqueue(delivery), storeTimeoutMs, `the inbox's enqueue (${inbox.engine})`);
    return { ok: true };
  } catch (error) {
    // A full queue is a bound kept, not a fault: the dispatcher says so, once a minute.
    if (error instanceof InboxFull) return { ok: false, errors: [error], retryLater: undefined };
    log.error(
      { eventId: event.id, type: event.type, err: error },
      'could not queue the event in the inbox; answering 503 so the Service retries it',
    );
    return { ok: false, errors: [error], retryLater: undefined };
  }
}
