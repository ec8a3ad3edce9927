import type { EventHandler, EventRouter, HandlerContext } from '../../events/event-router';
import { RetryLater } from '../../events/retry-later';
import type { AnyWebhookEvent } from '../../events/webhook-event';
import type { TracingHooks } from '../tracing';
import { warnReturnedValue } from './warn-returned-value';

/** How the handlers of one delivery ended. */
export type Outcome =
  | { ok: true }
  | {
      ok: false;
      errors: unknown[];
      /** Set when a handler threw RetryLater: answer 503 with this `Retry-After` (or the default). */
      retryLater: RetryLater | undefined;
    };

const OK: Outcome = { ok: true };

/** What becomes of the event after its handlers failed, as the log line says it. */
export type AfterFailure = (retryLater: RetryLater | undefined) => string;

/** The receiver's: the answer is what makes the Service try again. */
const ANSWERING_500: AfterFailure = () => 'answering 500 so the Service retries the event';

async function runOne(handler: EventHandler<AnyWebhookEvent>, event: AnyWebhookEvent, ctx: HandlerContext) {
  return (await handler(event, ctx)) as unknown;
}

/** Tells the hooks without waiting for them: a hook that hangs or throws cannot hold or change the answer. */
function tellErrorHandlers(
  router: EventRouter,
  errors: unknown[],
  event: AnyWebhookEvent,
  ctx: HandlerContext,
  then: AfterFailure,
) {
  const next = then(errors.find((e): e is RetryLater => e instanceof RetryLater));
  for (const error of errors) {
    ctx.logger.error({ eventId: event.id, type: event.type, err: error }, `a handler failed; ${next}`);
    for (const onError of router.errorHandlers) {
      const hookFailed = (hookError: unknown) =>
        ctx.logger.error({ eventId: event.id, err: hookError }, 'an onError handler threw');
      try {
        Promise.resolve(onError(error, event, ctx)).catch(hookFailed);
      } catch (hookError) {
        hookFailed(hookError);
      }
    }
  }
}

function failed(errors: unknown[]): Outcome {
  return { ok: false, errors, retryLater: errors.find((e): e is RetryLater => e instanceof RetryLater) };
}

/** Runs every handler matching the event concurrently; failures go to the logger and to `onError`. */
export async function runHandlers(
  router: EventRouter,
  handlers: readonly EventHandler<AnyWebhookEvent>[],
  event: AnyWebhookEvent,
  ctx: HandlerContext,
  tracing: TracingHooks,
  then: AfterFailure = ANSWERING_500,
): Promise<Outcome> {
  let errors: unknown[];
  // Undefined while nothing traces: then handlers run with no span work at all.
  const traced = tracing.handlerTracer();
  if (handlers.length <= 1) {
    // The common case, without an array of promises and allSettled.
    try {
      const handler = handlers[0];
      if (handler !== undefined) {
        const value = (await (traced === undefined
          ? handler(event, ctx)
          : traced(handler, event, ctx))) as unknown;
        if (value !== undefined) warnReturnedValue(handler, value, event, ctx);
      }
      return OK;
    } catch (error) {
      errors = [error];
    }
  } else {
    const results = await Promise.allSettled(
      handlers.map((handler) =>
        traced === undefined ? runOne(handler, event, ctx) : traced(handler, event, ctx),
      ),
    );
    errors = [];
    for (let i = 0; i < results.length; i++) {
      const result = results[i] as PromiseSettledResult<unknown>;
      if (result.status === 'rejected') errors.push(result.reason);
      else if (result.value !== undefined)
        warnReturnedValue(handlers[i] as EventHandler<AnyWebhookEvent>, result.value, event, ctx);
    }
    if (errors.length === 0) return OK;
  }
  tellErrorHandlers(router, errors, event, ctx, then);
  return failed(errors);
}
