import type { ResolvedLogger } from '../logger';
import {
  EVENT_PATTERNS,
  isEventPattern,
  isEventType,
  type EventPattern,
  type EventType,
  type TypesMatching,
} from './catalogue';
import { closestEventName } from './closest-event-name';
import { checkOnOptions, type OnOptions } from './on-options';
import type { AnyWebhookEvent, WebhookEvent } from './webhook-event';

/** What a handler gets beside the event. */
export interface HandlerContext {
  /**
   * A header of the delivery request, by lowercase name (`'user-agent'`, `'traceparent'`). Handlers
   * never see the response: the receiver answers only once every handler has settled. To refuse an
   * event, throw (a `RetryLater` to choose the `Retry-After`).
   */
  header(name: string): string | undefined;
  /** The receiver's logger, every level present: log here to keep a delivery's lines together. */
  logger: ResolvedLogger;
  /** Aborted when the delivery times out: the Service will retry, so long work may stop early. */
  signal: AbortSignal;
}

/** A handler of events `E`: what it returns or resolves is ignored; a throw or rejection refuses the event (500, or 503 with {@link RetryLater}) and the Service delivers it again. */
export type EventHandler<E> = (event: E, ctx: HandlerContext) => unknown;
/** Called with what a handler threw or rejected, the event and its context, before the 500 or 503 is sent; it cannot change the answer. */
export type ErrorHandler = (error: unknown, event: AnyWebhookEvent, ctx: HandlerContext) => unknown;

export type { OnOptions };

/** The handlers one event runs, decided by its type. */
export interface MatchedHandlers {
  /** The handlers to run, concurrently: the specific ones (or the `onUnhandled` ones), then the `onAny` ones. */
  handlers: readonly EventHandler<AnyWebhookEvent>[];
  /** True when an `on(...)` registration covers the type; false means the event is unhandled. */
  handled: boolean;
  /** The handlers registered with `{ ordering: 'newest-wins' }`: a subset of `handlers`. */
  ordered: readonly EventHandler<AnyWebhookEvent>[];
  /** `handlers` without `ordered`: they run for every event, stale or not. */
  unordered: readonly EventHandler<AnyWebhookEvent>[];
}

interface Registration {
  handler: EventHandler<AnyWebhookEvent>;
  ordered: boolean;
}

function typesOf(target: string): readonly EventType[] {
  if (isEventType(target)) return [target];
  if (isEventPattern(target)) return EVENT_PATTERNS.get(target) ?? [];
  const hint = closestEventName(target);
  throw new TypeError(
    `[service-webhooks] on: "${target}" is not an event type or pattern of the catalogue.${hint ? ` Did you mean "${hint}"?` : ''}`,
  );
}

function checkHandler(handler: unknown, method: string): void {
  if (typeof handler !== 'function') {
    throw new TypeError(
      `[service-webhooks] ${method}: the handler must be a function (got ${typeof handler})`,
    );
  }
}

/**
 * Maps event types to handlers. Every handler matching an event runs (concurrently); the delivery is
 * acknowledged only if all of them succeed.
 */
export class EventRouter {
  readonly #byType = new Map<string, Registration[]>();
  readonly #any: EventHandler<AnyWebhookEvent>[] = [];
  readonly #unhandled: EventHandler<AnyWebhookEvent>[] = [];
  readonly #errorHandlers: ErrorHandler[] = [];
  /** Per-type handler lists, built on first use after each registration, never per request. */
  #cache = new Map<string, MatchedHandlers>();

  /**
   * Handles one type, several, or a family pattern such as `'ag.access_pass.*'`. With
   * `{ ordering: 'newest-wins' }` the handler sees each entity's events newest-last only: one that is
   * older than the entity's newest processed event is skipped (see docs/out-of-order-events.md).
   */
  on<const K extends EventType | EventPattern>(
    target: K | readonly K[],
    handler: EventHandler<WebhookEvent<TypesMatching<K>>>,
    options?: OnOptions,
  ): this {
    checkHandler(handler, 'on');
    const ordered = checkOnOptions(options);
    const targets: readonly string[] = Array.isArray(target) ? target : [target as string];
    if (targets.length === 0) throw new TypeError('[service-webhooks] on: give at least one event type');
    const types = new Set(targets.flatMap(typesOf));
    for (const type of types) {
      const list = this.#byType.get(type) ?? [];
      list.push({ handler: handler as EventHandler<AnyWebhookEvent>, ordered });
      this.#byType.set(type, list);
    }
    this.#cache = new Map();
    return this;
  }

  /** Runs for every event, including types the catalogue does not know yet. */
  onAny(handler: EventHandler<AnyWebhookEvent>): this {
    checkHandler(handler, 'onAny');
    this.#any.push(handler);
    this.#cache = new Map();
    return this;
  }

  /** Runs for an event no `on(...)` registration covers. The event is still acknowledged if it succeeds. */
  onUnhandled(handler: EventHandler<AnyWebhookEvent>): this {
    checkHandler(handler, 'onUnhandled');
    this.#unhandled.push(handler);
    this.#cache = new Map();
    return this;
  }

  /** Told of every handler failure (the delivery is answered 500 and retried by the Service). */
  onError(handler: ErrorHandler): this {
    checkHandler(handler, 'onError');
    this.#errorHandlers.push(handler);
    return this;
  }

  /** The handlers an event of `type` runs. */
  match(type: string): MatchedHandlers {
    let matched = this.#cache.get(type);
    if (matched === undefined) {
      const specific = this.#byType.get(type) ?? [];
      const handled = specific.length > 0;
      const ordered = specific.filter((r) => r.ordered).map((r) => r.handler);
      const unordered = [
        ...(handled ? specific.filter((r) => !r.ordered).map((r) => r.handler) : this.#unhandled),
        ...this.#any,
      ];
      matched = { handled, handlers: [...ordered, ...unordered], ordered, unordered };
      // Only catalogue types are cached, so unknown type names cannot grow the cache.
      if (isEventType(type)) this.#cache.set(type, matched);
    }
    return matched;
  }

  /** True once any handler was registered with `{ ordering: 'newest-wins' }`. */
  get hasOrderedHandlers(): boolean {
    for (const list of this.#byType.values()) if (list.some((r) => r.ordered)) return true;
    return false;
  }

  /** The handlers registered with `onError`, in order. */
  get errorHandlers(): readonly ErrorHandler[] {
    return this.#errorHandlers;
  }
}

/** A new, empty router. */
export function createEventRouter(): EventRouter {
  return new EventRouter();
}
