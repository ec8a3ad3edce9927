import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { EventRouter, type HandlerContext } from '../events/event-router';
import { OptionsError } from '../options-error';
import { resolveDispatchOptions, type DispatchEventOptions } from './dispatch-options';
import { HttpProblem } from './http-problem';
import { getWebhookEvent } from './read-cloud-event';
import { runHandlers, type Outcome } from './run-handlers';

export type { DispatchEventOptions };

/** A dispatch middleware that can also wait for the handlers still running. */
export type DispatchHandler = RequestHandler & {
  /** Resolves once every handler started so far has settled (for graceful shutdown). */
  drain(): Promise<void>;
};

const ACKNOWLEDGED = new Set([200, 201]);

/**
 * Step 4: runs the event's handlers and answers 200 only once they all succeeded (or the event is a
 * known duplicate of one that did); 500 when one fails, 503 past `timeoutMs`, 409 while the same
 * event is still being processed by another delivery.
 */
export function dispatchEvent(router: EventRouter, options: DispatchEventOptions = {}): DispatchHandler {
  if (!(router instanceof EventRouter)) {
    throw new OptionsError('ERR_SW_ROUTER', 'dispatchEvent', 'router must come from createEventRouter()');
  }
  const { timeoutMs, leaseMs, retentionMs, retryAfter, scope, log, store } = resolveDispatchOptions(options);
  const inFlight = new Set<Promise<unknown>>();

  const retryLater = (status: 409 | 503, slug: string, title: string, detail: string) =>
    new HttpProblem({ status, slug, title, detail, headers: { 'Retry-After': retryAfter } });

  /** Handlers' outcome, with the claim settled: done only if they succeeded and the answer acknowledges. */
  async function settle(
    key: string,
    token: string,
    outcome: Outcome,
    res: Response,
    timedOut: () => boolean,
  ): Promise<Outcome> {
    if (store === false) return outcome;
    // A handler may answer itself; one that answered other than 200/201 wants the event again.
    const handlerRefused = !timedOut() && res.headersSent && !ACKNOWLEDGED.has(res.statusCode);
    const acknowledged = outcome.ok && !handlerRefused;
    try {
      if (acknowledged) await store.markDone(key, token, retentionMs);
      else await store.release(key, token);
    } catch (error) {
      log.error(
        { key, err: error },
        acknowledged
          ? 'could not mark the event done; a redelivery may run its handlers again'
          : 'could not release the event; a redelivery waits for its lease to end',
      );
    }
    return outcome;
  }

  async function dispatch(req: Parameters<RequestHandler>[0], res: Response): Promise<void> {
    const event = getWebhookEvent(res);
    const key = `${scope}\u0000${event.source}\u0000${event.id}`;
    const token = randomUUID();
    if (store !== false) {
      let claim;
      try {
        claim = await store.claim(key, token, leaseMs);
      } catch (error) {
        log.error({ eventId: event.id, err: error }, 'the idempotency store is unavailable; answering 503');
        throw retryLater(
          503,
          'store-unavailable',
          'Service Unavailable',
          'The receiver cannot record deliveries right now; retry later.',
        );
      }
      if (claim === 'done') {
        res.status(200).json({ id: event.id, type: event.type, status: 'duplicate' });
        return;
      }
      if (claim === 'busy') {
        throw retryLater(
          409,
          'in-progress',
          'Conflict',
          'This event is being processed by another delivery; retry later.',
        );
      }
    }

    const controller = new AbortController();
    const ctx: HandlerContext = { req, res, logger: log, signal: controller.signal };
    const { handled } = router.match(event.type);
    let timedOut = false;
    const work = runHandlers(router, event, ctx).then((outcome) =>
      settle(key, token, outcome, res, () => timedOut),
    );
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));

    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const first = await Promise.race([work, deadline]);
    clearTimeout(timer);
    if (first === 'timeout') {
      timedOut = true;
      controller.abort(new Error('delivery timed out'));
      log.warn(
        { eventId: event.id, type: event.type, timeoutMs },
        'handlers are still running past timeoutMs; answering 503, they go on and decide the outcome',
      );
      throw retryLater(
        503,
        'handler-timeout',
        'Service Unavailable',
        `The handlers did not finish within ${timeoutMs} ms; retry later.`,
      );
    }
    if (!first.ok) {
      throw new HttpProblem({
        status: 500,
        slug: 'handler-failed',
        title: 'Internal Server Error',
        detail: 'A handler failed to process the event; it will be processed again on retry.',
      });
    }
    if (res.headersSent) {
      if (!ACKNOWLEDGED.has(res.statusCode)) {
        log.warn(
          { eventId: event.id, status: res.statusCode },
          `a handler answered ${res.statusCode} itself; the Service will retry this event`,
        );
      }
      return;
    }
    if (!handled)
      log.info(
        { eventId: event.id, type: event.type },
        'no handler for this event type; acknowledged as unhandled',
      );
    res.status(200).json({ id: event.id, type: event.type, status: handled ? 'processed' : 'unhandled' });
  }

  const handler = function dispatchEvent(req, res, next) {
    dispatch(req, res).catch(next);
  } as DispatchHandler;
  handler.drain = async () => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  };
  return handler;
}
