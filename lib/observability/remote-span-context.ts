import type { SpanContext } from '@opentelemetry/api';
import { openTelemetryApi } from './otel-api';

/** W3C Trace Context: version (never ff), a non-zero trace id and parent id, flags. */
const TRACEPARENT = /^([\da-f]{2})-((?![0]{32})[\da-f]{32})-((?![0]{16})[\da-f]{16})-([\da-f]{2})(-[^\s]*)?$/;
/** tracestate holds at most 32 members of at most 256 characters each. */
const MAX_TRACESTATE = 8192;

/**
 * A W3C `traceparent` (with its `tracestate`) as the remote parent of a span, or `undefined` when it
 * is absent or not valid. Parsed here rather than through the registered propagator: the CloudEvents
 * Distributed Tracing extension is W3C Trace Context whatever the application propagates over HTTP.
 */
export function remoteSpanContext(traceparent: unknown, tracestate: unknown): SpanContext | undefined {
  if (typeof traceparent !== 'string' || traceparent.length > 512) return undefined;
  const match = TRACEPARENT.exec(traceparent.trim());
  if (match === null) return undefined;
  const [, version = '', traceId = '', spanId = '', flags = '', rest] = match;
  // Version 00 has nothing after its flags; a later version may, and is read as 00.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const state =
    typeof tracestate === 'string' && tracestate.length <= MAX_TRACESTATE
      ? openTelemetryApi().createTraceState(tracestate)
      : undefined;
  return {
    traceId,
    spanId,
    traceFlags: parseInt(flags, 16),
    isRemote: true,
    ...(state === undefined ? {} : { traceState: state }),
  };
}
