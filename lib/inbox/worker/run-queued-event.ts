import type { EventRouter, EventHandler, HandlerContext, MatchedHandlers } from '../../events/event-router';
import { InvalidEventError } from '../../events/invalid-event-error';
import { RetryLater } from '../../events/retry-later';
import type { AnyWebhookEvent } from '../../events/webhook-event';
import type { JobHandlers, QueuedDelivery } from '../queued-delivery';
import type { ResolvedLogger } from '../../logger';
import type { BoundedStore } from '../../core/dispatch/bounded-store';
import { DeliveryContext } from '../../core/dispatch/handler-context';
import { claimToken } from '../../idempotency/claim-token';
import { claimOutcome, type GuardedRun, type OrderingGuard } from '../../core/dispatch/ordering-guard';
import { keepClaim } from '../../core/dispatch/keep-claim';
import { readQueuedEvent } from './read-queued-event';
import { runHandlers, type Outcome, type PerHandler } from '../../core/dispatch/run-handlers';
import type { TracingHooks } from '../../core/tracing';
import { warnReturnedValue } from '../../core/dispatch/warn-returned-value';

/** How one try of a queued event ended. */
export type QueuedRunResult = (
  | { ok: true; status: 'processed' | 'unhandled' | 'duplicate' | 'stale' }
  | {
      ok: false;
      /** What to keep as the try's error. */
      error: unknown;
      /** Set when a handler threw RetryLater. */
      retryLater: RetryLater | undefined;
      /** True when no retry can help (the envelope no longer reads as an event): dead-letter it now. */
      permanent: boolean;
      /**
       * True when nothing failed: another try of this event, or another event of its entity, holds
       * what this try needs. It is put back for later and never dead-lettered for it (the holder's
       * lease bounds the wait).
       */
      putBack?: true;
    }
) & {
  /** Set when the event's `time` lay past its receipt plus the allowed skew (the guard held its mark). */
  futureTime?: true;
  /** What each handler did in this try; absent when the try ran none (not claimed, not read). */
  handlers?: HandlerOutcomes;
};

/** What the worker gives every try: the store that makes effects happen once, and the bounds. */
export interface QueuedRunContext {
  router: EventRouter;
  store: BoundedStore | undefined;
  log: ResolvedLogger;
  timeoutMs: number;
  /** How long a try's claim holds the event in the ledger. */
  leaseMs: number;
  /** The per-entity ordering guard, checked here when the job runs, never at enqueue. */
  guard: OrderingGuard;
  /** The hooks each try is traced through (the worker gives OpenTelemetry's). */
  tracing: TracingHooks;
  /** What the queue does with the event after try `attempt` failed: retried in N s, or dead. */
  afterFailure(attempt: number, retryLater: RetryLater | undefined): string;
  /** How many tries an event has: the last one's timeout is put back once, not dead-lettered. */
  attempts: number;
  /**
   * The keys of events whose last try timed out and was put back, in this process: the next last
   * try that times out is dead-lettered (a handler that always overruns is not put back for ever).
   */
  overran: Set<string>;
}

/** The most events whose overrun last try is remembered; the oldest is forgotten first. */
const MAX_OVERRAN = 10_000;

/** A job whose entity another job holds comes back after this long, not after a failure's backoff. */
const ENTITY_BUSY_RETRY_SECONDS = 5;

/** The ledger key of a queued event's handlers, apart from the receiver's key that says "queued". */
export const handledKey = (key: string) => `handled:${key}`;

const TIMED_OUT = Symbol('timed out');

const NO_STATE: JobHandlers = {};
const NONE: readonly string[] = [];

/**
 * Runs one queued event through the router: the worker's equivalent of the receiver's dispatch, with
 * the same `(event, ctx)`. Effects happen once through the idempotency store: a job run again after
 * its handlers succeeded (a worker killed before the queue heard) finds its key done and runs nothing;
 * of an event of several handlers, a try runs only those without a recorded success (in the store,
 * or in the job's state `job`). Never rejects.
 */
export function runQueuedEvent(
  context: QueuedRunContext,
  delivery: QueuedDelivery,
  attempt: number,
  job: JobHandlers = NO_STATE,
): Promise<QueuedRunResult> {
  return context.tracing.job(delivery, attempt, () => runTry(context, delivery, attempt, job));
}

async function runTry(
  context: QueuedRunContext,
  delivery: QueuedDelivery,
  attempt: number,
  job: JobHandlers,
): Promise<QueuedRunResult> {
  const { router, store, log, timeoutMs } = context;
  let event: AnyWebhookEvent;
  try {
    event = readQueuedEvent(delivery);
  } catch (error) {
    const permanent = error instanceof InvalidEventError;
    return { ok: false, error, retryLater: undefined, permanent };
  }
  const key = handledKey(delivery.key);
  const token = claimToken();
  // Past this the handlers' holds are no longer renewed (a hung handler lets the event go on).
  const untilMs = Date.now() + timeoutMs + context.leaseMs;
  const matched = router.match(event.type);
  // Successes are recorded one by one only for an event of several handlers: one's is the event's.
  const recording = store?.claimHandlers !== undefined && matched.handlers.length > 1 ? store : undefined;
  let succeeded = NONE;
  if (store !== undefined) {
    const claimed =
      recording === undefined
        ? await store.claim(key, token, event.id)
        : await recording.claimHandlers!(key, token, event.id).then((c) => {
            if (c === 'unavailable') return c;
            succeeded = c.succeeded;
            return c.result;
          });
    if (claimed === 'done') return { ok: true, status: 'duplicate' };
    if (claimed === 'busy') {
      // A try still running elsewhere (or a killed worker's claim): come back once its lease is over.
      const wait = new RetryLater('another try of this event holds it', {
        retryAfterSeconds: Math.ceil(context.leaseMs / 1000),
      });
      return { ok: false, error: wait, retryLater: wait, permanent: false, putBack: true };
    }
    if (claimed !== 'claimed') {
      const error = new Error('the idempotency store is unavailable');
      return { ok: false, error, retryLater: undefined, permanent: false };
    }
  }
  const chosen = queuedHandlers(
    matched,
    job,
    succeeded,
    recording && ((handler) => recording.recordHandler(key, token, handler, event.id)),
  );
  if (job.runOnly !== undefined) {
    const unknown = job.runOnly.filter((name) => ![...matched.names.values()].includes(name));
    if (unknown.length > 0)
      log.warn(
        { eventId: event.id, type: event.type, handlers: unknown },
        'a replay named handlers this router does not run for the event; they are skipped',
      );
  }
  const ctx = new DeliveryContext((name) => delivery.headers[name.toLowerCase()], log);
  // Bounded by when the receiver took the event in, so a replay weeks later is not judged by today.
  const receivedAt = Date.parse(delivery.receivedAt);
  const work = context.guard.run(
    event,
    chosen.matched,
    (handlers) =>
      runHandlers(
        router,
        handlers,
        event,
        ctx,
        context.tracing,
        (retryLater) => context.afterFailure(attempt, retryLater),
        chosen.each,
      ),
    undefined,
    Number.isFinite(receivedAt) ? receivedAt : Date.now(),
  );
  // Held while the handlers run, past the try's timeout too (up to untilMs): no other try starts them.
  const renew = store?.renew;
  if (renew !== undefined) {
    const held = { renew: () => renew(key, token), leaseMs: context.leaseMs, untilMs, what: 'the event' };
    keepClaim(held, work, log, event.id);
  }
  let timer: NodeJS.Timeout | undefined;
  const first = await Promise.race([
    work,
    new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(resolve, timeoutMs, TIMED_OUT))),
  ]);
  clearTimeout(timer);
  if (first === TIMED_OUT) {
    ctx.abort(new Error('the job timed out'));
    // The try is over, but its handlers may still write: the claim is settled once they stop.
    void work.then((late) => store?.settle(key, token, claimOutcome(late), event.id, () => undefined));
    const error = new Error(`the handlers ran past ${timeoutMs} ms`);
    if (store !== undefined && attempt >= context.attempts && !context.overran.delete(delivery.key)) {
      // The last try: its handlers may still succeed, so it is put back, not dead-lettered; the next
      // try finds the event done (a duplicate), still held (put back), or free (then it runs, and a
      // second overrun is dead-lettered). Without a store no try could see the late success, and
      // the next would run the handlers alongside: it is dead-lettered as before.
      if (context.overran.size >= MAX_OVERRAN) context.overran.delete(context.overran.values().next().value!);
      context.overran.add(delivery.key);
      const wait = new RetryLater('the last try timed out while its handlers still run', {
        retryAfterSeconds: Math.ceil(context.leaseMs / 1000),
      });
      return {
        ok: false,
        error,
        retryLater: wait,
        permanent: false,
        putBack: true,
        handlers: chosen.outcomes(),
      };
    }
    return { ok: false, error, retryLater: undefined, permanent: false, handlers: chosen.outcomes() };
  }
  // A replay that named some handlers ran only those: the event is done once the others are too.
  const partial =
    job.runOnly !== undefined && first.kind === 'ran' && first.outcome.ok && first.ordering !== 'stale'
      ? notDone(chosen.allDone(), matched.names.values(), chosen.outcomes())
      : undefined;
  const settled = partial === undefined ? claimOutcome(first) : partial;
  if (store !== undefined) await store.settle(key, token, settled, event.id, () => undefined);
  const result: QueuedRunResult =
    partial === undefined || partial.ok
      ? tryResult(first, matched.handled)
      : { ok: false, error: partial.errors[0], retryLater: undefined, permanent: true };
  return {
    ...result,
    ...(first.kind !== 'busy' && first.kind !== 'unavailable' && first.futureTime === true
      ? { futureTime: true as const }
      : {}),
    handlers: chosen.outcomes(),
  };
}

/**
 * After a replay that named handlers succeeded: a failure when others of the event still have no
 * recorded success, so the job goes back to the dead letters with them (not complete, losing them).
 */
function notDone(allDone: boolean, names: Iterable<string>, outcomes: HandlerOutcomes): Outcome {
  if (allDone) return { ok: true };
  const left = [...names].filter((n) => !outcomes.before.includes(n) && outcomes.ran.get(n)?.ok !== true);
  const error = new Error(
    `[service-webhooks] the replayed handlers succeeded; ${left.join(', ')} still ${left.length === 1 ? 'has' : 'have'} no recorded success: replay the event again (all its handlers not yet done) or name ${left.length === 1 ? 'it' : 'them'}`,
  );
  return { ok: false, errors: [error], retryLater: undefined };
}

/** What a try came to, from what the ordering guard decided and the handlers did. */
function tryResult(guarded: GuardedRun, handled: boolean): QueuedRunResult {
  switch (guarded.kind) {
    case 'stale':
      return { ok: true, status: 'stale' };
    case 'busy': {
      const wait = new RetryLater('another event of this entity is running its ordered handlers', {
        retryAfterSeconds: ENTITY_BUSY_RETRY_SECONDS,
      });
      return { ok: false, error: wait, retryLater: wait, permanent: false, putBack: true };
    }
    case 'unavailable': {
      const error = new Error('the idempotency store is unavailable (entity lease)');
      return { ok: false, error, retryLater: undefined, permanent: false };
    }
    case 'ran': {
      const { outcome } = guarded;
      if (outcome.ok) return { ok: true, status: handled ? 'processed' : 'unhandled' };
      return { ok: false, error: outcome.errors[0], retryLater: outcome.retryLater, permanent: false };
    }
  }
}

/** How one handler's run in a try ended. */
export type HandlerRun = { ok: true } | { ok: false; error: unknown };

/** What one try of a queued event did handler by handler. */
export interface HandlerOutcomes {
  /** The handlers this try ran, by name, each as it settled. */
  ran: ReadonlyMap<string, HandlerRun>;
  /** The handlers this try started that had not settled when it ended (it timed out). */
  unsettled: readonly string[];
  /** The handlers whose success was recorded before this try (in the job's state or the store). */
  before: readonly string[];
}

/** The handlers one try of a queued event runs, and what became of each. */
export interface QueuedHandlers {
  /**
   * The event's match narrowed to the handlers still to run, each wrapped to note its outcome and
   * record its success. `ordered` stays the event's own: the guard leases the entity, and advances
   * its mark only once the rest succeed, though every ordered handler succeeded in an earlier try.
   */
  matched: MatchedHandlers;
  /** The names runHandlers gives the contexts. */
  each: PerHandler;
  outcomes(): HandlerOutcomes;
  /** True when every handler of the event has now succeeded, in this try or before it. */
  allDone(): boolean;
}

/**
 * Chooses the handlers a try runs: those without a recorded success, in the job's state or in the
 * store (`succeeded`); with `runOnly` (a replay naming handlers) only those, each run once again even
 * if the store recorded its success, until the replayed job records it. `record` is called with a
 * handler's name once it succeeded, before the try ends. `ctx.attempt` is the handler's own try
 * number: the tries of the job that ran it before, plus one.
 */
function queuedHandlers(
  matched: MatchedHandlers,
  job: JobHandlers,
  succeeded: readonly string[],
  record: ((handler: string) => Promise<unknown>) | undefined,
): QueuedHandlers {
  const { runOnly, handlers: states = {} } = job;
  const before: string[] = [];
  const toRun = new Map<EventHandler<AnyWebhookEvent>, EventHandler<AnyWebhookEvent>>();
  const names = new Map<EventHandler<AnyWebhookEvent>, string>();
  const ran = new Map<string, HandlerRun>();
  const started = new Set<string>();

  function wrap(handler: EventHandler<AnyWebhookEvent>, name: string): EventHandler<AnyWebhookEvent> {
    const attempt = (states[name]?.attempts ?? 0) + 1;
    const run = async (event: AnyWebhookEvent, ctx: HandlerContext) => {
      (ctx as DeliveryContext).attempt = attempt;
      started.add(name);
      let value: unknown;
      try {
        value = await handler(event, ctx);
      } catch (error) {
        ran.set(name, { ok: false, error });
        throw error;
      }
      ran.set(name, { ok: true });
      // Recorded before the try settles its claim: a release cannot overtake it.
      if (record !== undefined) await record(name);
      // Warned about here, by the user's function: the wrapper is new on every try.
      if (value !== undefined) warnReturnedValue(handler, value, event, ctx);
    };
    // Spans are named by the function's own name.
    Object.defineProperty(run, 'name', { value: handler.name });
    return run;
  }

  for (const handler of matched.handlers) {
    const name = matched.names.get(handler) ?? '';
    const forced = runOnly?.includes(name) === true;
    if (states[name]?.ok === true || (!forced && succeeded.includes(name))) before.push(name);
    else if (runOnly === undefined || forced) {
      const wrapped = wrap(handler, name);
      toRun.set(handler, wrapped);
      names.set(wrapped, name);
    }
  }
  const pick = (list: readonly EventHandler<AnyWebhookEvent>[]) =>
    list.flatMap((h) => {
      const wrapped = toRun.get(h);
      return wrapped === undefined ? [] : [wrapped];
    });

  return {
    matched: {
      handled: matched.handled,
      handlers: pick(matched.handlers),
      // Every ordered handler, each that runs as its wrapper: the guard tells an ordered failure by
      // the function that failed, and still sees the event as ordered when they all succeeded before.
      ordered: matched.ordered.map((h) => toRun.get(h) ?? h),
      unordered: pick(matched.unordered),
      names,
    },
    each: { names },
    outcomes: () => ({ ran, unsettled: [...started].filter((n) => !ran.has(n)), before }),
    allDone: () =>
      [...matched.names.values()].every((name) => before.includes(name) || ran.get(name)?.ok === true),
  };
}
