import type * as OpenTelemetryApi from '@opentelemetry/api';
import type { SpanContext, Tracer, TracerProvider } from '@opentelemetry/api';

// How this package reaches OpenTelemetry: the API loaded only once something registered with it, the
// tracer active now, and the W3C traceparent both ways (the active span's out, a remote one in).

/**
 * Where `@opentelemetry/api` 1.x keeps every registration (tracer provider, context manager,
 * propagator): absent until an application registers an SDK.
 */
const REGISTRATIONS = Symbol.for('opentelemetry.js.api.1');

let api: typeof OpenTelemetryApi | undefined;

/**
 * Whether anything registered with OpenTelemetry in this process. Until something did, there is
 * nothing to trace into, so the API (44 modules) is not even loaded: a receiver without tracing
 * starts as fast as one that never heard of it.
 */
function openTelemetryRegistered(): boolean {
  return (globalThis as Record<symbol, unknown>)[REGISTRATIONS] !== undefined;
}

/** `@opentelemetry/api`, loaded the first time tracing has work to do. */
export function openTelemetryApi(): typeof OpenTelemetryApi {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, by design
  api ??= require('@opentelemetry/api') as typeof OpenTelemetryApi;
  return api;
}

const NAME = 'service-webhooks';
/** What the API delegates to while no SDK is registered: a fresh proxy hands out that very object. */
let noopProvider: TracerProvider | undefined;

let cachedDelegate: TracerProvider | undefined;
let cachedTracer: Tracer | undefined;

/**
 * The tracer for this request, or `undefined` while no SDK is registered: the receiver then does no
 * span work at all, not even the no-op API's. Checked per request (a global read and an identity
 * check), because an application may register its SDK after building the receiver; the tracer is
 * looked up again only when the registered provider changes.
 */
export function activeTracer(): Tracer | undefined {
  if (!openTelemetryRegistered()) return undefined;
  const { ProxyTracerProvider, trace } = openTelemetryApi();
  noopProvider ??= new ProxyTracerProvider().getDelegate();
  const provider = trace.getTracerProvider();
  const delegate = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  if (delegate === noopProvider) return undefined;
  if (delegate !== cachedDelegate) {
    cachedDelegate = delegate;
    cachedTracer = delegate.getTracer(NAME);
  }
  return cachedTracer;
}

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
