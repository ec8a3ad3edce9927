import type { AnyWebhookEvent } from '../events/webhook-event';
import { eventAnswer, problemAnswer } from './answers';
import type { DeliveryOutcome } from './delivery-record';
import { HttpProblem } from './http-problem';
import type { Answer } from './webhook-request';

/** The answer to one delivery and what it says, for the delivery record. */
export interface DispatchResult {
  answer: Answer;
  outcome: DeliveryOutcome;
  problem: string | null;
  handlerMs: number | null;
  /** What the ordering guard decided, when ordered handlers matched an event it could order. */
  ordering?: 'newest' | 'stale';
}

/** The answers dispatch can give, built from the receiver's `Retry-After`. */
export function dispatchResults(retryAfter: string) {
  const problem = (
    outcome: DeliveryOutcome,
    p: HttpProblem,
    handlerMs: number | null = null,
  ): DispatchResult => ({
    answer: problemAnswer(p),
    outcome,
    problem: p.slug,
    handlerMs,
  });
  const later = (status: 409 | 503, slug: string, title: string, detail: string, after = retryAfter) =>
    new HttpProblem({ status, slug, title, detail, headers: { 'Retry-After': after } });
  return {
    conflict: () =>
      problem(
        'conflict',
        later(
          409,
          'in-progress',
          'Conflict',
          'This event is being processed by another delivery; retry later.',
        ),
      ),
    entityBusy: () =>
      problem(
        'conflict',
        later(
          409,
          'entity-in-progress',
          'Conflict',
          'Another event of the same entity is being processed; retry later.',
        ),
      ),
    inboxUnavailable: () =>
      problem(
        'store-unavailable',
        later(
          503,
          'inbox-unavailable',
          'Service Unavailable',
          'The receiver cannot queue this event right now; retry later.',
        ),
      ),
    storeUnavailable: () =>
      problem(
        'store-unavailable',
        later(
          503,
          'store-unavailable',
          'Service Unavailable',
          'The receiver cannot record deliveries right now; retry later.',
        ),
      ),
    timeout: (timeoutMs: number, handlerMs: number) =>
      problem(
        'timeout',
        later(
          503,
          'handler-timeout',
          'Service Unavailable',
          `The handlers did not finish within ${timeoutMs} ms; retry later.`,
        ),
        handlerMs,
      ),
    retryLater: (seconds: number | undefined, handlerMs: number) =>
      problem(
        'failed',
        later(
          503,
          'retry-later',
          'Service Unavailable',
          'A handler asked for this event to be delivered again later.',
          seconds === undefined ? retryAfter : String(seconds),
        ),
        handlerMs,
      ),
    failed: (handlerMs: number) =>
      problem(
        'failed',
        new HttpProblem({
          status: 500,
          slug: 'handler-failed',
          title: 'Internal Server Error',
          detail: 'A handler failed to process the event; it will be processed again on retry.',
        }),
        handlerMs,
      ),
    acknowledged: (
      event: AnyWebhookEvent,
      status: 'processed' | 'unhandled' | 'duplicate' | 'stale' | 'queued',
      handlerMs: number | null,
      ordering?: 'newest' | 'stale',
    ): DispatchResult => ({
      answer: eventAnswer(event.id, event.type, status),
      outcome: status,
      problem: null,
      handlerMs,
      ...(ordering === undefined ? {} : { ordering }),
    }),
  };
}
