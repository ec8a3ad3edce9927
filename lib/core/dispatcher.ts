import type { EventRouter } from '../events/event-router';
import type { AnyWebhookEvent } from '../events/webhook-event';
import type { ResolvedLogger } from '../logger';
import { boundedStore } from './bounded-store';
import type { ResolvedDispatchOptions } from './dispatch-options';
import { dispatchResults, type DispatchResult } from './dispatch-results';
import { DeliveryContext } from './handler-context';
import { claimToken, idempotencyKey } from './idempotency-key';
import type { RateLimitedLog } from './rate-limited-log';
import { runHandlers, type Outcome } from './run-handlers';

export type { DispatchResult };

export interface Dispatcher {
  /** Runs the event's handlers (once, across redeliveries) and answers. Never rejects. */
  dispatch(event: AnyWebhookEvent, header: (name: string) => string | undefined): Promise<DispatchResult>;
  /** The ids of events whose handlers (or their store bookkeeping) are still running. */
  running(): string[];
  /** Resolves when nothing is running. */
  idle(): Promise<void>;
}

const TIMED_OUT = Symbol('timed out');

/**
 * Step 4 as a plain function. The answer is 200 only once every handler has succeeded (or the event
 * is a known duplicate of one that did). Every store call is bounded by `storeTimeoutMs`; an event
 * still running in this process is answered 409, never started twice.
 */
export function createDispatcher(
  router: EventRouter,
  options: ResolvedDispatchOptions,
  log: ResolvedLogger,
  warn: RateLimitedLog,
): Dispatcher {
  const { timeoutMs, scope } = options;
  const store = options.store === false ? undefined : boundedStore(options, log, warn);
  const results = dispatchResults(options.retryAfter);
  const running = new Map<string, { eventId: string; done: Promise<unknown> }>();

  /** Claims the event in the store; a result means the delivery is answered without running handlers. */
  async function claim(
    key: string,
    token: string,
    event: AnyWebhookEvent,
  ): Promise<DispatchResult | undefined> {
    const claimed = await store?.claim(key, token, event.id);
    if (claimed === 'unavailable') return results.storeUnavailable();
    if (claimed === 'done') return results.acknowledged(event, 'duplicate', null);
    return claimed === 'busy' ? results.conflict() : undefined;
  }

  /** Runs the handlers, settles the claim, and frees the event locally once all of that is over. */
  function run(
    key: string,
    token: string,
    event: AnyWebhookEvent,
    ctx: DeliveryContext,
    release: () => void,
  ) {
    const work = runHandlers(router, router.match(event.type).handlers, event, ctx)
      .catch((error: unknown): Outcome => ({ ok: false, errors: [error], retryLater: undefined }))
      .then((outcome) => (store === undefined ? outcome : store.settle(key, token, outcome, event.id)));
    running.set(key, { eventId: event.id, done: work });
    void work.then(() => {
      running.delete(key);
      release();
    });
    return work;
  }

  async function dispatch(
    event: AnyWebhookEvent,
    header: (name: string) => string | undefined,
  ): Promise<DispatchResult> {
    const key = idempotencyKey(scope, event.source, event.id);
    if (running.has(key)) return results.conflict();
    const token = claimToken();
    // Held locally from here, so a second delivery in this process never reaches the store or a handler.
    let release!: () => void;
    const reserved = new Promise<void>((resolve) => (release = resolve));
    running.set(key, { eventId: event.id, done: reserved });
    const refused = await claim(key, token, event);
    if (refused !== undefined) {
      running.delete(key);
      release();
      return refused;
    }

    const { handlers, handled } = router.match(event.type);
    const ctx = new DeliveryContext(header, log);
    const started = performance.now();
    const work = run(key, token, event, ctx, release);
    // One promise and one timer, not a race of two promises: this runs for every delivery.
    const first = await new Promise<Outcome | typeof TIMED_OUT>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs, TIMED_OUT);
      void work.then((outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      });
    });
    const handlerMs = performance.now() - started;
    if (first === TIMED_OUT) {
      ctx.abort(new Error('delivery timed out'));
      log.warn(
        { eventId: event.id, type: event.type, timeoutMs },
        'handlers are still running past timeoutMs; answering 503, they go on and decide the outcome',
      );
      return results.timeout(timeoutMs, handlerMs);
    }
    if (!first.ok) {
      return first.retryLater === undefined
        ? results.failed(handlerMs)
        : results.retryLater(first.retryLater.retryAfterSeconds, handlerMs);
    }
    if (!handled)
      log.info(
        { eventId: event.id, type: event.type },
        'no handler for this event type; acknowledged as unhandled',
      );
    // An unhandled type with no onUnhandled or onAny ran nothing: no handler time to report.
    return results.acknowledged(
      event,
      handled ? 'processed' : 'unhandled',
      handlers.length === 0 ? null : handlerMs,
    );
  }

  return {
    dispatch,
    running: () => [...running.values()].map((r) => r.eventId),
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running.values()].map((r) => r.done));
    },
  };
}
