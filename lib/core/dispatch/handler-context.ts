import type { HandlerContext } from '../../events/event-router';
import type { ResolvedLogger } from '../../logger';
import type { HandlerRun } from '../delivery-record';

/**
 * The context handlers receive. Its AbortController is made only when a handler reads `signal` (most
 * never do, and one per delivery costs more than the rest of dispatch); once the delivery has timed
 * out, a signal read later is already aborted.
 */
export class DeliveryContext implements HandlerContext {
  readonly header: (name: string) => string | undefined;
  readonly logger: ResolvedLogger;
  /** Set by runHandlers for an event of one handler; each of several gets its own context by `named`. */
  handler = '';
  /** Set by runHandlers, as `handler` is: 1 unless the store counted failed runs of the event before; behind the inbox, the handler's own try number. */
  attempt = 1;
  /**
   * The handlers that settled, each reported by `settled` on its own context (the delivery's list);
   * undefined until one has.
   */
  runs: HandlerRun[] | undefined;
  #controller: AbortController | undefined;
  #abortReason: Error | undefined;
  /** The delivery's context, when this one is a handler's among several: one signal for them all. */
  readonly #delivery: DeliveryContext | undefined;

  constructor(
    header: (name: string) => string | undefined,
    logger: ResolvedLogger,
    delivery?: DeliveryContext,
  ) {
    this.header = header;
    this.logger = logger;
    this.#delivery = delivery;
  }

  /** The context of one of the event's several handlers, sharing this delivery's signal. */
  named(handler: string, attempt = 1): DeliveryContext {
    const ctx = new DeliveryContext(this.header, this.logger, this);
    ctx.handler = handler;
    ctx.attempt = attempt;
    return ctx;
  }

  /** Reports this handler's run, started at `startedMs` (performance.now()), to the delivery. */
  settled(outcome: 'ok' | 'failed', startedMs: number): void {
    const delivery = this.#delivery ?? this;
    const run: HandlerRun = {
      handler: this.handler,
      outcome,
      attempt: this.attempt,
      durationMs: performance.now() - startedMs,
    };
    if (delivery.runs === undefined) delivery.runs = [run];
    else delivery.runs.push(run);
  }

  get signal(): AbortSignal {
    if (this.#delivery !== undefined) return this.#delivery.signal;
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#abortReason !== undefined) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  abort(reason: Error): void {
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }
}

const NOT_A_RESPONSE = (method: string) =>
  function notAResponse(): never {
    throw new TypeError(
      `[service-webhooks] ctx.${method}() does not exist: handlers do not write the answer. A handler is (event, ctx); return to acknowledge the event, throw RetryLater (or any error) to have the Service send it again.`,
    );
  };

// A handler written as Express's (req, res) calls res.status(…) or res.send(…) on the context: it
// gets this message instead of "res.status is not a function". Not enumerable, not in the types.
for (const method of ['status', 'send', 'json', 'sendStatus', 'end', 'set', 'writeHead']) {
  Object.defineProperty(DeliveryContext.prototype, method, {
    value: NOT_A_RESPONSE(method),
    enumerable: false,
  });
}
