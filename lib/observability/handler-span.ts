import type { Span, Tracer } from '@opentelemetry/api';
import type { EventHandler, HandlerContext } from '../events/event-router';
import type { AnyWebhookEvent } from '../events/webhook-event';
import { openTelemetryApi } from './active-tracer';
import { typeLabel } from './type-label';

/** What a failed handler's span keeps: the error's type and message (and stack), never the event. */
function recordFailure(span: Span, error: unknown): void {
  const type = error instanceof Error ? error.name : typeof error;
  if (error instanceof Error) {
    span.recordException({ name: error.name, message: error.message, stack: error.stack });
  } else {
    // A thrown non-Error could be the event's data itself: only its type is kept.
    span.recordException({ name: type, message: `a handler threw a ${type}, not an Error` });
  }
  span.setAttribute('error.type', type);
  span.setStatus({ code: openTelemetryApi().SpanStatusCode.ERROR, message: type });
}

/**
 * Runs one handler in a child span of the delivery, named after the event's type, with the handler
 * span active so the application's own spans nest under it.
 */
export async function runInHandlerSpan(
  tracer: Tracer,
  handler: EventHandler<AnyWebhookEvent>,
  event: AnyWebhookEvent,
  ctx: HandlerContext,
): Promise<unknown> {
  // The SDK is the application's: if it throws, the handler runs untraced (once), never fails for it.
  let span: Span | undefined;
  try {
    span = tracer.startSpan(`handle ${typeLabel(event.type)}`, {
      attributes: {
        'cloudevents.event_id': event.id,
        'cloudevents.event_type': event.type,
        // The registered name (a fixed set, the router's) and which run of it this is.
        'service_webhooks.handler': ctx.handler,
        'service_webhooks.handler.attempt': ctx.attempt,
        ...(handler.name === '' ? {} : { 'code.function.name': handler.name }),
      },
    });
  } catch {
    span = undefined;
  }
  if (span === undefined) return await handler(event, ctx);
  const traced = span;
  let called = false;
  const run = () => {
    called = true;
    return handler(event, ctx);
  };
  try {
    const { context, trace } = openTelemetryApi();
    let active;
    try {
      active = trace.setSpan(context.active(), traced);
    } catch {
      active = undefined;
    }
    return await (active === undefined ? run() : context.with(active, run));
  } catch (error) {
    if (!called) return await run();
    quietly(() => recordFailure(traced, error));
    throw error;
  } finally {
    quietly(() => traced.end());
  }
}

function quietly(call: () => void): void {
  try {
    call();
  } catch {
    // The tracing SDK failed; the handler's outcome is what counts.
  }
}
