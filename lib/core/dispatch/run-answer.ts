import type { MatchedHandlers } from '../../events/event-router';
import type { AnyWebhookEvent } from '../../events/webhook-event';
import type { ResolvedLogger } from '../../logger';
import type { dispatchResults, DispatchResult } from '../problems';
import { TIMED_OUT } from './deadline-queue';
import type { DeliveryContext } from './handler-context';
import type { GuardedRun } from './ordering-guard';

/** What the handlers' run (or its timeout) answers: built once per dispatcher, called per delivery. */
export function runAnswer(
  results: ReturnType<typeof dispatchResults>,
  log: ResolvedLogger,
  timeoutMs: number,
): (
  first: GuardedRun | typeof TIMED_OUT,
  event: AnyWebhookEvent,
  matched: MatchedHandlers,
  ctx: DeliveryContext,
  handlerMs: number,
) => DispatchResult {
  return function answer(
    first: GuardedRun | typeof TIMED_OUT,
    event: AnyWebhookEvent,
    matched: MatchedHandlers,
    ctx: DeliveryContext,
    handlerMs: number,
  ): DispatchResult {
    if (first === TIMED_OUT) {
      ctx.abort(new Error('delivery timed out'));
      log.warn(
        { eventId: event.id, type: event.type, timeoutMs },
        'handlers are still running past timeoutMs; answering 503, they go on and decide the outcome',
      );
      return results.timeout(timeoutMs, handlerMs);
    }
    if (first.kind === 'busy') return results.entityBusy();
    if (first.kind === 'unavailable') return results.storeUnavailable();
    if (first.kind === 'stale') return results.acknowledged(event, 'stale', null, 'stale');
    const { outcome, ordering } = first;
    if (!outcome.ok) {
      const failed =
        outcome.retryLater === undefined
          ? results.failed(handlerMs)
          : results.retryLater(outcome.retryLater.retryAfterSeconds, handlerMs);
      return ordering === undefined ? failed : { ...failed, ordering };
    }
    if (!matched.handled)
      log.info(
        { eventId: event.id, type: event.type },
        'no handler for this event type; acknowledged as unhandled',
      );
    // An unhandled type with no onUnhandled or onAny ran nothing: no handler time to report.
    return results.acknowledged(
      event,
      matched.handled ? 'processed' : 'unhandled',
      matched.handlers.length === 0 ? null : handlerMs,
      ordering,
    );
  };
}
