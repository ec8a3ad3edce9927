import type { HandlerContext } from '../events/event-router';
import type { ResolvedLogger } from '../logger';

/**
 * The context handlers receive. Its AbortController is made only when a handler reads `signal` (most
 * never do, and one per delivery costs more than the rest of dispatch); once the delivery has timed
 * out, a signal read later is already aborted.
 */
export class DeliveryContext implements HandlerContext {
  readonly header: (name: string) => string | undefined;
  readonly logger: ResolvedLogger;
  #controller: AbortController | undefined;
  #abortReason: Error | undefined;

  constructor(header: (name: string) => string | undefined, logger: ResolvedLogger) {
    this.header = header;
    this.logger = logger;
  }

  get signal(): AbortSignal {
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
