import { context, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { EventHandler, HandlerContext } from '../events/event-router';
import type { AnyWebhookEvent } from '../events/webhook-event';
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
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
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
): Promise<void> {
  const span = tracer.startSpan(`handle ${typeLabel(event.type)}`, {
    attributes: {
      'cloudevents.event_id': event.id,
      'cloudevents.event_type': event.type,
      ...(handler.name === '' ? {} : { 'code.function.name': handler.name }),
    },
  });
  try {
    await context.with(trace.setSpan(context.active(), span), handler, undefined, event, ctx);
  } catch (error) {
    recordFailure(span, error);
    throw error;
  } finally {
    span.end();
  }
}
