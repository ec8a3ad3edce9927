import type { TracedHandler, TracingHooks } from '../core/tracing';
import { activeTraceparent, activeTracer } from './active-tracer';
import { startDeliverySpan } from './delivery-span';
import { runInHandlerSpan } from './handler-span';
import { runInJobSpan } from './job-span';

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
