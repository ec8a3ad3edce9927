import { activeTracer } from './active-tracer';
import { openTelemetryApi } from './otel-api';

/**
 * The W3C traceparent of the span active now (the delivery's, inside the receiver), or null without
 * an SDK or a valid span: a queued job keeps it so the job's span can link back to its delivery.
 */
export function activeTraceparent(): string | null {
  if (activeTracer() === undefined) return null;
  const span = openTelemetryApi().trace.getActiveSpan();
  if (span === undefined) return null;
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!openTelemetryApi().isSpanContextValid(span.spanContext())) return null;
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}
