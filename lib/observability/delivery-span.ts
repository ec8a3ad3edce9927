import type { Attributes, Context, Span, SpanContext, Tracer } from '@opentelemetry/api';
import type { CloudEventEnvelope } from '../core/event/cloud-event-envelope';
import type { DeliveryRecord } from '../core/delivery-record';
import type { DeliveryTrace } from '../core/tracing';
import type { WebhookRequest } from '../core/webhook-request';
import type { AnyWebhookEvent } from '../events/webhook-event';
import { activeTracer, openTelemetryApi, remoteSpanContext } from './active-tracer';
import { typeLabel } from './type-label';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/**
 * The SERVER span of one request. It is started once its parent is known (the event's `traceparent`
 * extension is in the body), backdated to when the request entered the receiver. The SDK is the
 * application's: whatever it throws is handed to `failed` and the delivery goes on untraced, never
 * unanswered, so the core needs no wrapper around these calls.
 */
export class DeliverySpan implements DeliveryTrace {
  readonly #tracer: Tracer;
  readonly #request: WebhookRequest;
  readonly #failed: (error: unknown) => void;
  /** Epoch milliseconds. */
  readonly #startTime: number;
  #span: Span | undefined;
  #active: Context | undefined;
  /**
   * Set once the request's credentials were checked. Until then its `traceparent` is the sender's
   * word only: anyone could make us export spans into a trace of their choosing (and force sampling),
   * so a request refused before that is a root span.
   */
  authenticated = false;

  constructor(tracer: Tracer, request: WebhookRequest, startedAt: number, failed: (error: unknown) => void) {
    this.#tracer = tracer;
    this.#request = request;
    this.#failed = failed;
    this.#startTime = performance.timeOrigin + startedAt;
  }

  /** Starts the span as a child of the event's trace (falling back to the request's). */
  begin(envelope: CloudEventEnvelope, event: AnyWebhookEvent): void {
    try {
      this.#begin(envelope, event);
    } catch (error) {
      this.#failed(error);
    }
  }

  #begin(envelope: CloudEventEnvelope, event: AnyWebhookEvent): void {
    const fromEvent = remoteSpanContext(envelope.traceparent, envelope.tracestate);
    this.#start(
      `process ${typeLabel(event.type)}`,
      this.authenticated ? fromEvent : undefined,
      {
        'cloudevents.event_id': event.id,
        'cloudevents.event_type': event.type,
        'cloudevents.event_source': event.source,
        'cloudevents.event_spec_version': envelope.specversion,
        'service_webhooks.layout': event.layout,
        ...(typeof envelope.subject === 'string' ? { 'cloudevents.event_subject': envelope.subject } : {}),
      },
      this.authenticated,
    );
  }

  /**
   * Runs `work` (the dispatch) with this span active, so each handler's span is its child; exactly
   * once, even when the SDK throws before or after calling it.
   */
  around<T>(work: () => T): T {
    if (this.#active === undefined) return work();
    let ran: { value: T } | undefined;
    let called = false;
    try {
      openTelemetryApi().context.with(this.#active, () => {
        called = true;
        ran = { value: work() };
      });
    } catch (error) {
      if (called && ran === undefined) throw error;
      this.#failed(error);
    }
    return ran === undefined ? work() : ran.value;
  }

  /** Ends the span with what the record says; a request refused before its event was read starts it here. */
  end(record: DeliveryRecord): void {
    try {
      this.#end(record);
    } catch (error) {
      this.#failed(error);
    }
  }

  #end(record: DeliveryRecord): void {
    const method = METHODS.has(this.#request.method) ? this.#request.method : undefined;
    const span = this.#span ?? this.#start(method ?? 'HTTP', undefined, {}, this.authenticated);
    span.setAttributes({
      'http.request.method': method ?? '_OTHER',
      'http.response.status_code': record.status,
      'service_webhooks.outcome': record.outcome,
    });
    if (record.problem !== null) span.setAttribute('service_webhooks.problem', record.problem);
    if (record.attempt !== null) span.setAttribute('service_webhooks.attempt', record.attempt);
    if (record.handlerMs !== null) span.setAttribute('service_webhooks.handler_ms', record.handlerMs);
    const userAgent = this.#request.header('user-agent');
    if (userAgent !== undefined) span.setAttribute('user_agent.original', userAgent);
    if (record.outcome === 'failed' || record.outcome === 'timeout' || record.status >= 500) {
      span.setAttribute('error.type', record.problem ?? String(record.status));
      span.setStatus({ code: openTelemetryApi().SpanStatusCode.ERROR, message: record.problem ?? undefined });
    }
    span.end();
  }

  #start(name: string, fromEvent: SpanContext | undefined, attributes: Attributes, trusted: boolean): Span {
    const { context, trace, SpanKind } = openTelemetryApi();
    const active = context.active();
    // An HTTP instrumentation's span, when there is one, already continues the request's traceparent.
    const instrumented = trace.getSpanContext(active);
    const fromRequest =
      instrumented ??
      (trusted
        ? remoteSpanContext(this.#request.header('traceparent'), this.#request.header('tracestate'))
        : undefined);
    const parent = fromEvent ?? fromRequest;
    const span = this.#tracer.startSpan(
      name,
      {
        kind: SpanKind.SERVER,
        startTime: this.#startTime,
        attributes,
        // The request's own trace stays reachable when the event's trace is the parent.
        ...(fromEvent !== undefined && fromRequest !== undefined && fromRequest.spanId !== fromEvent.spanId
          ? { links: [{ context: fromRequest }] }
          : {}),
      },
      parent === undefined || parent === instrumented ? active : trace.setSpanContext(active, parent),
    );
    this.#span = span;
    this.#active = trace.setSpan(active, span);
    return span;
  }
}

/**
 * A span for this request, or `undefined` (and no work at all) while no OpenTelemetry SDK is
 * registered, or when the SDK threw (told to `failed`).
 */
export function startDeliverySpan(
  request: WebhookRequest,
  startedAt: number,
  failed: (error: unknown) => void,
): DeliverySpan | undefined {
  try {
    const tracer = activeTracer();
    return tracer === undefined ? undefined : new DeliverySpan(tracer, request, startedAt, failed);
  } catch (error) {
    failed(error);
    return undefined;
  }
}
