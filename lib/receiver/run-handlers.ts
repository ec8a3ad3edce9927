import type { EventRouter, HandlerContext } from '../events/event-router';
import type { AnyWebhookEvent } from '../events/webhook-event';

export type Outcome = { ok: true } | { ok: false; errors: unknown[] };

/** Runs every handler matching the event concurrently; failures go to the logger and to `onError`. */
export async function runHandlers(
  router: EventRouter,
  event: AnyWebhookEvent,
  ctx: HandlerContext,
): Promise<Outcome> {
  const { handlers } = router.match(event.type);
  const results = await Promise.allSettled(handlers.map(async (handler) => handler(event, ctx)));
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (errors.length === 0) return { ok: true };
  for (const error of errors) {
    ctx.logger.error(
      { eventId: event.id, type: event.type, err: error },
      'a handler failed; answering 500 so the Service retries the event',
    );
    for (const onError of router.errorHandlers) {
      try {
        await onError(error, event, ctx);
      } catch (hookError) {
        ctx.logger.error({ eventId: event.id, err: hookError }, 'an onError handler threw');
      }
    }
  }
  return { ok: false, errors };
}
