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
 * after the bound is harmless: the job id is the key's, so the retry's enqueue adds nothing. The
 * outcome is handed to `next` in the same turn it is known (no `.then` of its own between the
 * enqueue and the acknowledgement), and the promise settles as `next`'s answer does; the outcome
 * itself never rejects.
 */
export function enqueueDelivery<R>(
  inbox: Inbox,
  key: string,
  event: Pick<AnyWebhookEvent, 'id' | 'type' | 'source' | 'time' | 'raw'>,
  header: (name: string) => string | undefined,
  deadlines: DeadlineQueue,
  log: ResolvedLogger,
  /** The trace active at the delivery, kept so the job's span links back to it; null untraced. */
  traceparent: string | null,
  /** What is made of the outcome: the settle of the claim, the answer. */
  next: (outcome: Outcome) => R | PromiseLike<R>,
  /** Set for a quarantined event a strict receiver refused for spec rules 2–5. */
  checkRules?: true,
  /** The body text `event.raw` was parsed from, queued as is; without it the envelope is written again. */
  envelopeText?: string,
): Promise<R> {
  // Only the id and type are kept through the wait, not the event: a caller that lets go of the
  // event (the dispatcher does) holds none of it while the engine answers.
  const { id, type } = event;
  const failed = (error: unknown) => next(notQueued(error, id, type, log));
  let enqueued: Promise<void>;
  try {
    const delivery = queuedDelivery(key, event, header, traceparent, envelopeText);
    if (checkRules === true) delivery.checkRules = true;
    enqueued = inbox.enqueue(delivery);
  } catch (error) {
    // A synchronous throw of enqueue() is answered as its rejection would be.
    return Promise.resolve().then(() => failed(error));
  }
  return deadlines.waitThen(
    enqueued,
    performance.now(),
    (settled) =>
      settled === TIMED_OUT
        ? failed(new TimeoutError(`the inbox's enqueue (${inbox.engine})`, deadlines.timeoutMs))
        : next(queued()),
    failed,
  );
}

/** A new object each time: an outcome is the claim's to settle with, and may be kept. */
const queued = (): Outcome => ({ ok: true });

function notQueued(error: unknown, id: string, type: string, log: ResolvedLogger): Outcome {
  // A full queue is a bound kept, not a fault: the dispatcher says so, once a minute.
  if (!(error instanceof InboxFull))
    log.error(
      { eventId: id, type, err: error },
      'could not queue the event in the inbox; answering 503 so the Service retries it',
    );
  return { ok: false, errors: [error], retryLater: undefined };
}
