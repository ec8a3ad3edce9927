import type { EventHandler, HandlerContext } from '../events/event-router';
import type { AnyWebhookEvent } from '../events/webhook-event';
import type { QueuedDelivery } from '../inbox/queued-delivery';
import type { DeliveryRecord } from './delivery-record';
import type { CloudEventEnvelope } from './event/cloud-event-envelope';
import type { WebhookRequest } from './webhook-request';

/**
 * The trace of one request as the core drives it. Its methods contain the tracing SDK's failures
 * themselves: none of them throws, and `around` runs its work exactly once whatever the SDK does.
 */
export interface DeliveryTrace {
  /** Set once the request's credentials were checked; until then its trace headers are not trusted. */
  authenticated: boolean;
  /** The event is read: the trace can now continue the event's own. */
  begin(envelope: CloudEventEnvelope, event: AnyWebhookEvent): void;
  /** Runs the dispatch inside the trace, so each handler's span is its child. */
  around<T>(work: () => T): T;
  /** The request is answered. */
  end(record: DeliveryRecord): void;
}

/** Runs one handler of an event in its own span; never fails for the SDK's sake. Resolves to what the handler returned. */
export type TracedHandler = (
  handler: EventHandler<AnyWebhookEvent>,
  event: AnyWebhookEvent,
  ctx: HandlerContext,
) => Promise<unknown>;

/**
 * What the core calls to trace, given by whoever builds it: the doors and the inbox workers hand it
 * observability's OpenTelemetry hooks, so the core imports no tracing code. Each hook answers
 * `undefined` (or null) while nothing traces, and the core then does no tracing work at all.
 */
export interface TracingHooks {
  /** The trace of a request that just entered the receiver; `failed` hears of an SDK that threw. */
  startDelivery(
    request: WebhookRequest,
    startedAt: number,
    failed: (error: unknown) => void,
  ): DeliveryTrace | undefined;
  /** How this delivery's handlers run traced, or `undefined` to run them as they are. */
  handlerTracer(): TracedHandler | undefined;
  /** The W3C traceparent active now, kept with a queued event so its job's span links back. */
  traceparent(): string | null;
  /** Runs one try of a queued job in its span. */
  job<T extends { ok: boolean }>(
    delivery: QueuedDelivery,
    attempt: number,
    work: () => Promise<T>,
  ): Promise<T>;
}
