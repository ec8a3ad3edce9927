import type { EventHandler, EventRouter, HandlerContext } from '../../events/event-router';
import type { DeliveryContext } from './handler-context';
import { RetryLater } from '../../events/retry-later';
import { RateLimited } from '../../events/rate-limited';
import type { AnyWebhookEvent } from '../../events/webhook-event';
import type { TracingHooks } from '../tracing';
import { warnReturnedValue } from './warn-returned-value';

/** How the handlers of one delivery ended. */
export type Outcome =
  | { ok: true }
  | {
      ok: false;
      errors: unknown[];
      /** Set when a handler threw RetryLater: answer 503 with this `Retry-After` (or the default). */
      retryLater: RetryLater | undefined;
      /**
       * The handlers that failed, when runHandlers ran them (the ordering guard advances an entity
       * whose ordered handlers all succeeded although another failed); absent otherwise.
       */
      failed?: readonly EventHandler<AnyWebhookEvent>[];
    };

const OK: Outcome = { ok: true };

/** What becomes of the event after its handlers failed, as the log line says it. */
export type AfterFailure = (retryLater: RetryLater | undefined) => string;

/** The receiver's: the answer is what makes the Service try again. */
const ANSWERING_500: AfterFailure = () => 'answering 500 so the Service retries the event';

/** The event's handlers by name, and how a success is recorded so a retry skips that handler. */
export interface PerHandler {
  names: ReadonlyMap<EventHandler<AnyWebhookEvent>, string>;
  /**
   * Records a handler's success in the store, never rejects; undefined when nothing is recorded (the
   * store cannot, or the event has one handler: its success is the event's).
   */
  record?: (handler: string) => Promise<unknown>;
  /**
   * `ctx.attempt` of every handler that runs (each of them had no recorded success, so each ran on
   * the same earlier runs); 1 when undefined. The receiver gives the store's count, a worker its try.
   */
  attempt?: number;
}

/** A handler's failure, with the context it ran in (which names it). */
interface Failure {
  error: unknown;
  ctx: HandlerContext;
  handler: EventHandler<AnyWebhookEvent>;
}

async function runOne(handler: EventHandler<AnyWebhookEvent>, event: AnyWebhookEvent, ctx: HandlerContext) {
  return (await handler(event, ctx)) as unknown;
}

/** Tells the hooks without waiting for them: a hook that hangs or throws cannot hold or change the answer. */
function tellErrorHandlers(
  router: EventRouter,
  failures: Failure[],
  event: AnyWebhookEvent,
  then: AfterFailure,
) {
  const next = then(retryLaterOf(failures.map((f) => f.error)));
  for (const { error, ctx } of failures) {
    ctx.logger.error(
      { eventId: event.id, type: event.type, handler: ctx.handler, attempt: ctx.attempt, err: error },
      `a handler failed; ${next}`,
    );
    for (const onError of router.errorHandlers) {
      const hookFailed = (hookError: unknown) =>
        ctx.logger.error({ eventId: event.id, err: hookError }, 'an onError handler threw');
      try {
        Promise.resolve(onError(error, event, ctx)).catch(hookFailed);
      } catch (hookError) {
        hookFailed(hookError);
      }
    }
  }
}

/** The RetryLater the handlers' failures ask for: a RateLimited first, as it holds back the whole queue. */
function retryLaterOf(errors: unknown[]): RetryLater | undefined {
  return (
    errors.find((e): e is RateLimited => e instanceof RateLimited) ??
    errors.find((e): e is RetryLater => e instanceof RetryLater)
  );
}

function failed(failures: Failure[]): Outcome {
  const errors = failures.map((f) => f.error);
  return { ok: false, errors, retryLater: retryLaterOf(errors), failed: failures.map((f) => f.handler) };
}

/**
 * Runs every handler given concurrently; failures go to the logger and to `onError`, each naming its
 * handler. With several handlers and `each.record`, a handler's success is recorded as it settles
 * (all recorded before this resolves, so a release after a failure cannot overtake one), except the
 * last to settle when all others succeeded: the event's markDone then covers it.
 */
export function runHandlers(...args: Parameters<typeof runHandlersNow>): Promise<Outcome> {
  try {
    const outcome = runHandlersNow(...args);
    return outcome instanceof Promise ? outcome : Promise.resolve(outcome);
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/**
 * As {@link runHandlers}, but a lone handler that returns no promise (a synchronous one) is decided
 * at once: its outcome is returned as it is, with no promise turn to wait for. `startedMs`: when the
 * caller has just read `performance.now()`, a lone handler's run is timed from it instead of reading
 * the clock again.
 */
export function runHandlersNow(
  router: EventRouter,
  handlers: readonly EventHandler<AnyWebhookEvent>[],
  event: AnyWebhookEvent,
  ctx: DeliveryContext,
  tracing: TracingHooks,
  then: AfterFailure = ANSWERING_500,
  each?: PerHandler,
  startedMs?: number,
): Outcome | Promise<Outcome> {
  // Undefined while nothing traces: then handlers run with no span work at all.
  const traced = tracing.handlerTracer();
  if (handlers.length > 1) return runSeveral(router, handlers, event, ctx, traced, then, each);
  // The common case, without an array of promises and allSettled.
  const handler = handlers[0];
  if (handler === undefined) return OK;
  if (each !== undefined) {
    ctx.handler = each.names.get(handler) ?? '';
    if (each.attempt !== undefined) ctx.attempt = each.attempt;
  }
  const started = startedMs ?? performance.now();
  let value: unknown;
  try {
    value = traced === undefined ? handler(event, ctx) : traced(handler, event, ctx);
  } catch (error) {
    return oneFailed(router, handler, error, event, ctx, started, then);
  }
  // A thenable is awaited as `await` would; anything else is the handler's result already.
  if (typeof (value as PromiseLike<unknown> | null)?.then === 'function') {
    return Promise.resolve(value).then(
      (settled) => oneSucceeded(handler, settled, event, ctx, started),
      (error: unknown) => oneFailed(router, handler, error, event, ctx, started, then),
    );
  }
  return oneSucceeded(handler, value, event, ctx, started);
}

function oneSucceeded(
  handler: EventHandler<AnyWebhookEvent>,
  value: unknown,
  event: AnyWebhookEvent,
  ctx: DeliveryContext,
  startedMs: number,
): Outcome {
  ctx.settled('ok', startedMs);
  if (value !== undefined) warnReturnedValue(handler, value, event, ctx);
  return OK;
}

function oneFailed(
  router: EventRouter,
  handler: EventHandler<AnyWebhookEvent>,
  error: unknown,
  event: AnyWebhookEvent,
  ctx: DeliveryContext,
  startedMs: number,
  then: AfterFailure,
): Outcome {
  ctx.settled('failed', startedMs);
  const failures = [{ error, ctx, handler }];
  tellErrorHandlers(router, failures, event, then);
  return failed(failures);
}

/** Several handlers at once, each settled apart (see {@link runHandlers}). */
async function runSeveral(
  router: EventRouter,
  handlers: readonly EventHandler<AnyWebhookEvent>[],
  event: AnyWebhookEvent,
  ctx: DeliveryContext,
  traced: ReturnType<TracingHooks['handlerTracer']>,
  then: AfterFailure,
  each: PerHandler | undefined,
): Promise<Outcome> {
  const contexts = handlers.map((h) => ctx.named(each?.names.get(h) ?? '', each?.attempt));
  let pending = handlers.length;
  let anyFailed = false;
  const record = each?.record;
  const results = await Promise.allSettled(
    handlers.map((handler, i) => {
      const own = contexts[i] as DeliveryContext;
      const startedMs = performance.now();
      const running = traced === undefined ? runOne(handler, event, own) : traced(handler, event, own);
      return running.then(
        async (value) => {
          own.settled('ok', startedMs);
          pending--;
          if (record !== undefined && (pending > 0 || anyFailed)) await record(own.handler);
          return value;
        },
        (error: unknown) => {
          own.settled('failed', startedMs);
          pending--;
          anyFailed = true;
          throw error;
        },
      );
    }),
  );
  const failures: Failure[] = [];
  for (let i = 0; i < results.length; i++) {
    const result = results[i] as PromiseSettledResult<unknown>;
    const own = contexts[i] as DeliveryContext;
    const handler = handlers[i] as EventHandler<AnyWebhookEvent>;
    if (result.status === 'rejected') failures.push({ error: result.reason, ctx: own, handler });
    else if (result.value !== undefined) warnReturnedValue(handler, result.value, event, own);
  }
  if (failures.length === 0) return OK;
  tellErrorHandlers(router, failures, event, then);
  return failed(failures);
}
