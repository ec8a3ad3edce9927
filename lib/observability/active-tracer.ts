import type { Tracer, TracerProvider } from '@opentelemetry/api';
import { openTelemetryApi, openTelemetryRegistered } from './otel-api';

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
