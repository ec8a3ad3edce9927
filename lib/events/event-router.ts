import type { ResolvedLogger } from '../logger';
import {
  EVENT_PATTERNS,
  isEventPattern,
  isEventType,
  type EventPattern,
  type EventType,
  type TypesMatching,
} from './catalogue';
import { OptionsError } from '../options-error';
import { closestEventName } from './closest-event-name';
import { checkNameOption, checkOnOptions, type OnOptions } from './on-options';
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
  /**
   * The running handler's name: its `name` option, else its function's name, else its registration
   * (the type or pattern, `onAny`, `onUnhandled`). Its success is recorded under this name.
   */
  readonly handler: string;
  /**
   * Which run of this handler for this event this is: 1 for the first. A handler that succeeded does
   * not run again; one that did not is told 1 plus the earlier runs of the event that failed (counted
   * by the idempotency store when their claim was released). 1 means no earlier run settled: a run
   * cut short by a crashed process is not counted. Always 1 without an idempotency store, or with
   * one that does not count (no `claimHandlers`). Behind the inbox, how many tries of the job ran
   * it, this one included.
   */
  readonly attempt: number;
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
  /** Each of `handlers` by its name (a handler is in one event's list once, under one name). */
  names: ReadonlyMap<EventHandler<AnyWebhookEvent>, string>;
}

interface Registration {
  handler: EventHandler<AnyWebhookEvent>;
  ordered: boolean;
  name: string;
  /** True when the name was made from the registration, the handler having none of its own. */
  anonymous: boolean;
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

/** What the registration is called in a message: the method and, for `on`, its target. */
function describe(method: string, target: string | undefined): string {
  return target === undefined ? `${method}(...)` : `${method}('${target}', ...)`;
}

/**
 * Maps event types to handlers. Every handler matching an event runs (concurrently); the delivery is
 * acknowledged only if all of them succeed.
 */
export class EventRouter {
  readonly #byType = new Map<string, Registration[]>();
  readonly #any: Registration[] = [];
  readonly #unhandled: Registration[] = [];
  /** Every name to its one function: a name keys a handler's recorded success, so it must stay its own. */
  readonly #names = new Map<string, EventHandler<AnyWebhookEvent>>();
  readonly #errorHandlers: ErrorHandler[] = [];
  /** Per-type handler lists, built on first use after each registration, never per request. */
  #cache = new Map<string, MatchedHandlers>();
  /**
   * The last type the cache answered, and its handlers: a sender's events run in streaks of one type,
   * and each event's type is a new string (JSON.parse interns only short values), which the map must
   * hash before its lookup; a comparison with the last one costs less.
   */
  #lastType: string | undefined;
  #lastMatched: MatchedHandlers | undefined;

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
    const { ordered, name } = checkOnOptions(options);
    const targets: readonly string[] = Array.isArray(target) ? target : [target as string];
    if (targets.length === 0) throw new TypeError('[service-webhooks] on: give at least one event type');
    const types = new Set(targets.flatMap(typesOf));
    const written = targets.join("', '");
    const registration = this.#register(handler as EventHandler<AnyWebhookEvent>, name, written, ordered);
    const where = describe('on', written);
    this.#refuseTwiceFor(registration, this.#any, where);
    for (const type of types) this.#refuseTwiceFor(registration, this.#byType.get(type) ?? [], where);
    for (const type of types) {
      const list = this.#byType.get(type) ?? [];
      list.push(registration);
      this.#byType.set(type, list);
    }
    this.#keep(registration);
    return this;
  }

  /**
   * Runs for every event, including types the catalogue does not know yet. `name` as for
   * {@link OnOptions.name}; an anonymous one is named `onAny`.
   */
  onAny(handler: EventHandler<AnyWebhookEvent>, options?: { name?: string }): this {
    checkHandler(handler, 'onAny');
    const registration = this.#register(
      handler,
      checkNameOption(options, 'onAny'),
      undefined,
      false,
      'onAny',
    );
    const everyOther = [...this.#any, ...this.#unhandled, ...[...this.#byType.values()].flat()];
    this.#refuseTwiceFor(registration, everyOther, describe('onAny', undefined));
    this.#any.push(registration);
    this.#keep(registration);
    return this;
  }

  /**
   * Runs for an event no `on(...)` registration covers. The event is still acknowledged if it
   * succeeds. `name` as for {@link OnOptions.name}; an anonymous one is named `onUnhandled`.
   */
  onUnhandled(handler: EventHandler<AnyWebhookEvent>, options?: { name?: string }): this {
    checkHandler(handler, 'onUnhandled');
    const name = checkNameOption(options, 'onUnhandled');
    const registration = this.#register(handler, name, undefined, false, 'onUnhandled');
    this.#refuseTwiceFor(
      registration,
      [...this.#any, ...this.#unhandled],
      describe('onUnhandled', undefined),
    );
    this.#unhandled.push(registration);
    this.#keep(registration);
    return this;
  }

  /**
   * The registration's name, from the option, the function, or the registration itself; refused when
   * another function already has it, since a name keys the handler's recorded success.
   */
  #register(
    handler: EventHandler<AnyWebhookEvent>,
    option: string | undefined,
    target: string | undefined,
    ordered: boolean,
    method = 'on',
  ): Registration {
    const own = option ?? (handler.name === '' ? undefined : handler.name);
    const name = own ?? target ?? method;
    const anonymous = own === undefined;
    const holder = this.#names.get(name);
    if (holder !== undefined && holder !== handler) {
      throw new OptionsError(
        'ERR_SW_ROUTER',
        describe(method, target),
        anonymous
          ? `this anonymous handler is named "${name}" after its registration, and another handler already has that name. Give each its own name, e.g. { name: 'crm' } and { name: 'welcome-email' }: the name keys the handler's recorded success for each event, so it must be stable across deploys`
          : `two different handlers are named "${name}". Give each its own { name: '...' }: the name keys the handler's recorded success for each event, so it must belong to one handler`,
      );
    }
    return { handler, ordered, name, anonymous };
  }

  /** One handler, or one name, runs once for an event: a second registration matching the same event is refused. */
  #refuseTwiceFor(registration: Registration, others: readonly Registration[], where: string): void {
    const clash = others.find((r) => r.handler === registration.handler || r.name === registration.name);
    if (clash === undefined) return;
    throw new OptionsError(
      'ERR_SW_ROUTER',
      where,
      `the handler "${registration.name}" is already registered for some of these events, and would run twice for one event under one name. Register it once with a list of types (on(['a', 'b'], handler)), or give the second one its own { name: '...' }`,
    );
  }

  #keep(registration: Registration): void {
    this.#names.set(registration.name, registration.handler);
    this.#cache = new Map();
    this.#lastType = undefined;
  }

  /** Told of every handler failure (the delivery is answered 500 and retried by the Service). */
  onError(handler: ErrorHandler): this {
    checkHandler(handler, 'onError');
    this.#errorHandlers.push(handler);
    return this;
  }

  /** The handlers an event of `type` runs. */
  match(type: string): MatchedHandlers {
    if (type === this.#lastType) return this.#lastMatched as MatchedHandlers;
    let matched = this.#cache.get(type);
    if (matched === undefined) {
      const specific = this.#byType.get(type) ?? [];
      const handled = specific.length > 0;
      const orderedOnes = specific.filter((r) => r.ordered);
      const unorderedOnes = [
        ...(handled ? specific.filter((r) => !r.ordered) : this.#unhandled),
        ...this.#any,
      ];
      const ordered = orderedOnes.map((r) => r.handler);
      const unordered = unorderedOnes.map((r) => r.handler);
      const names = new Map([...orderedOnes, ...unorderedOnes].map((r) => [r.handler, r.name]));
      matched = { handled, handlers: [...ordered, ...unordered], ordered, unordered, names };
      // Only catalogue types are cached, so unknown type names cannot grow the cache.
      if (isEventType(type)) this.#cache.set(type, matched);
      else return matched;
    }
    this.#lastType = type;
    this.#lastMatched = matched;
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
