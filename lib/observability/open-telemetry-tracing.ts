import type { Link, Span, Tracer } from '@opentelemetry/api';
import type { TracedHandler, TracingHooks } from '../core/tracing';
import type { EventHandler, HandlerContext } from '../events/event-router';
import type { AnyWebhookEvent } from '../events/webhook-event';
import type { QueuedDelivery } from '../inbox/queued-delivery';
import { activeTraceparent, activeTracer, openTelemetryApi, remoteSpanContext } from './active-tracer';
import { startDeliverySpan } from './delivery-span';
import { typeLabel } from './type-label';

// The handler runner of the current tracer, rebuilt only when the registered tracer changes, so a
// traced delivery allocates no runner of its own.
let boundTracer: ReturnType<typeof activeTracer>;
let bound: TracedHandler | undefined;

/**
 * The OpenTelemetry hooks the doors and the inbox workers give the core. Without a registered SDK
 * each answers "nothing to trace" after a global read, and `@opentelemetry/api` is not even loaded.
 */
export const openTelemetryTracing: TracingHooks = {
  startDelivery: startDeliverySpan,
  handlerTracer() {
    const tracer = activeTracer();
    if (tracer === undefined) return undefined;
    if (tracer !== boundTracer) {
      boundTracer = tracer;
      bound = (handler, event, ctx) => runInHandlerSpan(tracer, handler, event, ctx);
    }
    return bound;
  },
  traceparent: activeTraceparent,
  job: runInJobSpan,
};

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
async function runInHandlerSpan(
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

/**
 * Runs one try of a queued job in a CONSUMER span linked to the delivery's span (a link, not a parent:
 * the delivery was answered long ago), with the job span active so handler spans nest under it.
 * Without an SDK, or if the SDK throws, the work runs untraced.
 */
async function runInJobSpan<T extends { ok: boolean }>(
  delivery: QueuedDelivery,
  attempt: number,
  work: () => Promise<T>,
): Promise<T> {
  const tracer = activeTracer();
  if (tracer === undefined) return work();
  let span: Span;
  try {
    const api = openTelemetryApi();
    const linked = remoteSpanContext(delivery.traceparent, undefined);
    const links: Link[] = linked === undefined ? [] : [{ context: linked }];
    span = tracer.startSpan(`process ${typeLabel(delivery.type)}`, {
      kind: api.SpanKind.CONSUMER,
      links,
      attributes: {
        'cloudevents.event_id': delivery.id,
        'cloudevents.event_type': delivery.type,
        'messaging.operation.type': 'process',
        'service_webhooks.inbox.attempt': attempt,
      },
    });
  } catch {
    return work();
  }
  let result: T | undefined;
  try {
    const { context, trace } = openTelemetryApi();
    result = await context.with(trace.setSpan(context.active(), span), work);
    return result;
  } finally {
    try {
      if (result === undefined || !result.ok)
        span.setStatus({ code: openTelemetryApi().SpanStatusCode.ERROR, message: 'the try failed' });
      span.end();
    } catch {
      // The SDK is the application's; the job's outcome does not depend on it.
    }
  }
}
