import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { EventRouter, type HandlerContext } from '../events/event-router';
import type { AnyWebhookEvent } from '../events/webhook-event';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import { MemoryStore } from '../idempotency/memory-store';
import { resolveLogger, type Logger, type ResolvedLogger } from '../logger';
import { OptionsError } from '../options-error';
import { HttpProblem } from './http-problem';
import { getWebhookEvent } from './read-cloud-event';

export interface DispatchEventOptions {
  /**
   * How long the handlers may run before the delivery is answered 503 (the Service retries it). They
   * keep running; their outcome still decides whether the event is done. Defaults to `10_000` ms.
   */
  timeoutMs?: number;
  /**
   * Remembers processed events so a redelivery does not run the handlers again; `false` turns that
   * off (every delivery runs the handlers). Defaults to a new {@link MemoryStore}.
   */
  idempotency?: IdempotencyStore | false;
  /** Scopes idempotency keys, so two receivers sharing one store never share keys. Defaults to `''`. */
  name?: string;
  /** How long a claim holds an event while its handlers run; must exceed `timeoutMs`. Defaults to `max(5 × timeoutMs, 60_000)` ms. */
  leaseMs?: number;
  /** How long a processed event is remembered. Defaults to 7 hours, past the Service's 6-hour retry window. */
  retentionMs?: number;
  /** Seconds sent in `Retry-After` on 409 and 503. Defaults to `30`. */
  retryAfterSeconds?: number;
  /** Where failures are logged. Defaults to the console. */
  logger?: Logger | false;
}

/** A dispatch middleware that can also wait for the handlers still running. */
export type DispatchHandler = RequestHandler & {
  /** Resolves once every handler started so far has settled (for graceful shutdown). */
  drain(): Promise<void>;
};

const SEVEN_HOURS = 7 * 60 * 60 * 1000;
const ACKNOWLEDGED = new Set([200, 201]);

type Outcome = { ok: true } | { ok: false; errors: unknown[] };

function positive(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new OptionsError(
      'ERR_SW_TIMEOUT',
      'dispatchEvent',
      `${name} must be a positive number of milliseconds (got ${String(value)})`,
    );
  }
  return value;
}

function checkStore(store: unknown): IdempotencyStore | false {
  if (store === false) return false;
  const methods = ['claim', 'markDone', 'release', 'get'] as const;
  if (
    typeof store !== 'object' ||
    store === null ||
    methods.some((m) => typeof (store as Record<string, unknown>)[m] !== 'function')
  ) {
    throw new OptionsError(
      'ERR_SW_STORE',
      'dispatchEvent',
      'idempotency must be an IdempotencyStore (claim, markDone, release, get) or false',
    );
  }
  return store as IdempotencyStore;
}

async function runHandlers(
  router: EventRouter,
  event: AnyWebhookEvent,
  ctx: HandlerContext,
): Promise<Outcome> {
  const { handlers } = router.match(event.type);
  const results = await Promise.allSettled(handlers.map(async (handler) => handler(event, ctx)));
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (errors.length === 0) return { ok: true };
  for (const error of errors) {
    ctx.logger.error(
      { eventId: event.id, type: event.type, err: error },
      'a handler failed; answering 500 so the Service retries the event',
    );
    for (const onError of router.errorHandlers) {
      try {
        await onError(error, event, ctx);
      } catch (hookError) {
        ctx.logger.error({ eventId: event.id, err: hookError }, 'an onError handler threw');
      }
    }
  }
  return { ok: false, errors };
}

/**
 * Step 4: runs the event's handlers and answers 200 only once they all succeeded (or the event is a
 * known duplicate of one that did); 500 when one fails, 503 past `timeoutMs`, 409 while the same
 * event is still being processed by another delivery.
 */
export function dispatchEvent(router: EventRouter, options: DispatchEventOptions = {}): DispatchHandler {
  if (!(router instanceof EventRouter)) {
    throw new OptionsError('ERR_SW_ROUTER', 'dispatchEvent', 'router must come from createEventRouter()');
  }
  const timeoutMs = positive(options.timeoutMs ?? 10_000, 'timeoutMs');
  const leaseMs = positive(options.leaseMs ?? Math.max(5 * timeoutMs, 60_000), 'leaseMs');
  const retentionMs = positive(options.retentionMs ?? SEVEN_HOURS, 'retentionMs');
  const retryAfter = String(Math.ceil(positive(options.retryAfterSeconds ?? 30, 'retryAfterSeconds')));
  if (leaseMs <= timeoutMs) {
    throw new OptionsError(
      'ERR_SW_TIMEOUT',
      'dispatchEvent',
      'leaseMs must be longer than timeoutMs, or a slow handler could run twice at once',
    );
  }
  if (options.name !== undefined && typeof options.name !== 'string') {
    throw new OptionsError('ERR_SW_NAME', 'dispatchEvent', 'name must be a string');
  }
  const scope = options.name ?? '';
  const log: ResolvedLogger = resolveLogger(options.logger, 'dispatchEvent');
  const store = checkStore(
    options.idempotency === undefined ? new MemoryStore({ logger: options.logger }) : options.idempotency,
  );
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
