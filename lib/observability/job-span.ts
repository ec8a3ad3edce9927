import type { Link, Span } from '@opentelemetry/api';
import type { QueuedDelivery } from '../inbox/queued-delivery';
import { activeTracer, openTelemetryApi, remoteSpanContext } from './active-tracer';
import { typeLabel } from './type-label';

/**
 * Runs one try of a queued job in a CONSUMER span linked to the delivery's span (a link, not a parent:
 * the delivery was answered long ago), with the job span active so handler spans nest under it.
 * Without an SDK, or if the SDK throws, the work runs untraced.
 */
export async function runInJobSpan<T extends { ok: boolean }>(
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
