import type { AnyWebhookEvent } from '../../events/webhook-event';
import type { Inbox } from '../../inbox/inbox';
import { queuedDelivery } from '../../inbox/queued-delivery';
import type { ResolvedLogger } from '../../logger';
import type { Outcome } from './run-handlers';
import { TimeoutError } from '../../with-timeout';
import { InboxFull } from '../../inbox/inbox-full';
import { TIMED_OUT, type DeadlineQueue } from './deadline-queue';

/**
 * Puts a claimed event in the inbox, bounded by `deadlines` (a queue of `storeTimeoutMs`: one timer
 * for all the enqueues in flight, not a setTimeout and a clearTimeout each), as an outcome the
 * idempotency claim is settled with: `ok` (the key is done, so a redelivery is answered 200 without
 * a second enqueue) or not (the claim is released and the Service retries). An enqueue that lands
 * after the bound is harmless: the job id is the key's, so the retry's enqueue adds nothing. Never
 * rejects.
 */
export function enqueueDelivery(
  inbox: Inbox,
  key: string,
  event: Pick<AnyWebhookEvent, 'id' | 'type' | 'source' | 'time' | 'raw'>,
  header: (name: string) => string | undefined,
  deadlines: DeadlineQueue,
  log: ResolvedLogger,
  /** The trace active at the delivery, kept so the job's span links back to it; null untraced. */
  traceparent: string | null,
  /** Set for a quarantined event a strict receiver refused for spec rules 2–5. */
  checkRules?: true,
  /** The body text `event.raw` was parsed from, queued as is; without it the envelope is written again. */
  envelopeText?: string,
): Promise<Outcome> {
  const failed = (error: unknown): Outcome => notQueued(error, event, log);
  let enqueued: Promise<void>;
  try {
    const delivery = queuedDelivery(key, event, header, traceparent, envelopeText);
    if (checkRules === true) delivery.checkRules = true;
    enqueued = inbox.enqueue(delivery);
  } catch (error) {
    // A synchronous throw of enqueue() is answered as its rejection would be.
    return Promise.resolve(failed(error));
  }
  return deadlines
    .wait(enqueued, performance.now())
    .then(
      (settled) =>
        settled === TIMED_OUT
          ? failed(new TimeoutError(`the inbox's enqueue (${inbox.engine})`, deadlines.timeoutMs))
          : queued(),
      failed,
    );
}

/** A new object each time: an outcome is the claim's to settle with, and may be kept. */
const queued = (): Outcome => ({ ok: true });

function notQueued(
  error: unknown,
  event: Pick<AnyWebhookEvent, 'id' | 'type'>,
  log: ResolvedLogger,
): Outcome {
  // A full queue is a bound kept, not a fault: the dispatcher says so, once a minute.
  if (!(error instanceof InboxFull))
    log.error(
      { eventId: event.id, type: event.type, err: error },
      'could not queue the event in the inbox; answering 503 so the Service retries it',
    );
  return { ok: false, errors: [error], retryLater: undefined };
}
