import type { EventHandler, EventRouter, MatchedHandlers } from '../../events/event-router';
import type { ClaimResult, HandlersClaim } from '../../idempotency/idempotency-store';
import type { AnyWebhookEvent } from '../../events/webhook-event';
import type { ResolvedLogger } from '../../logger';
import { boundedStore } from './bounded-store';
import { checkOrderingStore } from './check-ordering-store';
import type { BookkeepingEvent } from '../../idempotency/bookkeeping-event';
import type { ResolvedDispatchOptions } from './dispatch-options';
import { dispatchResults, type DispatchResult } from '../problems';
import { DeliveryContext } from './handler-context';
import { claimToken } from '../../idempotency/claim-token';
import { idempotencyKey } from '../../idempotency/store-keys';
import type { RateLimitedLog } from '../../rate-limited-log';
import { claimOutcome, orderingGuard, ran, thrown, type GuardedRun } from './ordering-guard';
import type { TracingHooks } from '../tracing';
import { runHandlers, runHandlersNow, type Outcome, type PerHandler } from './run-handlers';
import { enqueueDelivery } from './enqueue-delivery';
import { InboxFull } from '../../inbox/inbox-full';
import { deadlineQueue, TIMED_OUT } from './deadline-queue';
import type { HandlerRun } from '../delivery-record';
import { runAnswer } from './run-answer';
import { runningEvents, type RunningEvent } from './running-events';

export type { DispatchResult };

const NONE: readonly string[] = [];

/** How often `idle()` looks again at entries left behind with their work settled. */
const STUCK_LOOK_MS = 100;

/** What an entry holds for the moment before its work's promise exists: nothing to wait for. */
const NOT_YET: Promise<unknown> = Promise.resolve();

/** An enqueue's settle lingers nothing: a markDone that fails is retried without holding the event. */
const NO_LINGER = () => undefined;

export interface Dispatcher {
  /**
   * Runs the event's handlers (once, across redeliveries) and answers. Never rejects. `text`, the
   * body `event.raw` was parsed from, is what an inbox queues when given.
   */
  dispatch(
    event: AnyWebhookEvent,
    header: (name: string) => string | undefined,
    text?: string,
  ): Promise<DispatchResult>;
  /**
   * The same, for a caller that takes a result as readily as a promise of one: with a store that
   * answers at once and handlers that return none, no promise is made. Never rejects; may throw
   * where `dispatch` would reject.
   */
  dispatchNow(
    event: AnyWebhookEvent,
    header: (name: string) => string | undefined,
    text?: string,
  ): DispatchResult | Promise<DispatchResult>;
  /** The ids of events whose handlers (or their store bookkeeping) are still running. */
  running(): string[];
  /** Resolves when nothing is running. */
  idle(): Promise<void>;
}

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
  tracing: TracingHooks,
  onBookkeeping?: (event: BookkeepingEvent) => void,
): Dispatcher {
  const { timeoutMs, scope } = options;
  // With an inbox this receiver only queues: the worker runs the handlers and checks its own store.
  if (options.inbox === undefined) checkOrderingStore(router, options.store);
  const store = options.store === false ? undefined : boundedStore(options, log, warn, onBookkeeping);
  const results = dispatchResults(options.retryAfter);
  const guard = orderingGuard(options, log, warn, onBookkeeping);
  const running = runningEvents();
  const deadlines = deadlineQueue(timeoutMs);
  /** The enqueues' bound: one timer for all those in flight. */
  const enqueueDeadlines = deadlineQueue(options.storeTimeoutMs);
  // With an inbox the worker runs the handlers: the receiver's own claim only says "queued".
  const counting = options.inbox === undefined ? store?.claimHandlers : undefined;
  const answer = runAnswer(results, log, timeoutMs);

  /** What a claim that was not granted answers, without running handlers. */
  function refusal(claimed: Exclude<ClaimResult, 'claimed'> | 'unavailable', event: AnyWebhookEvent) {
    if (claimed === 'unavailable') return results.storeUnavailable();
    return claimed === 'done' ? results.acknowledged(event, 'duplicate', null) : results.conflict();
  }

  /**
   * Runs the handlers, settles the claim, and frees the event locally once all of that is over. With
   * a lone synchronous handler and a store that answers at once, all of it is done before this
   * returns: the run itself, not a promise of it.
   */
  function run(
    key: string,
    token: string,
    event: AnyWebhookEvent,
    matched: MatchedHandlers,
    ctx: DeliveryContext,
    succeeded: readonly string[],
    attempt: number,
    started: number,
  ): GuardedRun | Promise<GuardedRun> {
    // Bookkeeping retried in the background keeps the event held here until it settles.
    const held: { lingering?: Promise<void> } = {};
    const linger = (background: Promise<void>) =>
      void (held.lingering =
        held.lingering === undefined ? background : Promise.all([held.lingering, background]).then());
    let guarded: GuardedRun | Promise<GuardedRun>;
    if (matched.ordered.length === 0 || !anyLeft(matched.ordered, matched, succeeded)) {
      // Nothing ordered left to run (every delivery, commonly): the guard has nothing to decide, so
      // it is not asked, and no closure is built for it.
      try {
        const outcome = runHandlersNow(
          router,
          left(matched.handlers, matched, succeeded),
          event,
          ctx,
          tracing,
          undefined,
          each(key, token, event, matched, attempt),
          started,
        );
        guarded = outcome instanceof Promise ? outcome.then(ran, thrown) : ran(outcome);
      } catch (error) {
        guarded = thrown(error);
      }
    } else {
      // The guard picks every handler, or the unordered ones of a stale event; of those, only the
      // ones without a recorded success run.
      guarded = guard.run(
        event,
        matched,
        (handlers) =>
          runHandlers(
            router,
            left(handlers, matched, succeeded),
            event,
            ctx,
            tracing,
            undefined,
            each(key, token, event, matched, attempt),
          ),
        linger,
      );
    }
    if (guarded instanceof Promise)
      return guarded.then((settled) => settle(settled, key, token, event, held, linger));
    return settle(guarded, key, token, event, held, linger);
  }

  /** Settles the claim after the run, then frees the event here (or holds it while bookkeeping lingers). */
  function settle(
    guarded: GuardedRun,
    key: string,
    token: string,
    event: AnyWebhookEvent,
    held: { lingering?: Promise<void> },
    linger: (background: Promise<void>) => void,
  ): GuardedRun | Promise<GuardedRun> {
    if (store !== undefined) {
      const outcome = claimOutcome(guarded);
      if (store.now === undefined)
        return store
          .settle(key, token, outcome, event.id, linger)
          .then(() => free(guarded, key, event, held));
      store.now.settle(key, token, outcome, event.id, linger);
    }
    return free(guarded, key, event, held);
  }

  function free(
    guarded: GuardedRun,
    key: string,
    event: AnyWebhookEvent,
    held: { lingering?: Promise<void> },
  ): GuardedRun {
    const { lingering } = held;
    if (lingering === undefined) running.delete(key);
    else running.set(key, { eventId: event.id, done: lingering.then(() => void running.delete(key)) });
    return guarded;
  }

  /** Those of `handlers` without a recorded success. */
  function left(
    handlers: readonly EventHandler<AnyWebhookEvent>[],
    matched: MatchedHandlers,
    succeeded: readonly string[],
  ): readonly EventHandler<AnyWebhookEvent>[] {
    if (succeeded.length === 0) return handlers;
    return handlers.filter((h) => !succeeded.includes(matched.names.get(h) ?? ''));
  }

  /** Whether any of `handlers` has no recorded success. */
  function anyLeft(
    handlers: readonly EventHandler<AnyWebhookEvent>[],
    matched: MatchedHandlers,
    succeeded: readonly string[],
  ): boolean {
    return succeeded.length === 0 || handlers.some((h) => !succeeded.includes(matched.names.get(h) ?? ''));
  }

  /**
   * Names, the attempt, and the recording of successes when the store keeps them for an event of
   * several handlers; otherwise the match itself (it has the names), so a new event of one handler
   * allocates nothing more.
   */
  function each(
    key: string,
    token: string,
    event: AnyWebhookEvent,
    matched: MatchedHandlers,
    attempt: number,
  ): PerHandler {
    if (store?.claimHandlers === undefined || matched.handlers.length <= 1)
      return attempt === 1 ? matched : { names: matched.names, attempt };
    return {
      names: matched.names,
      attempt,
      record: (handler) => store.recordHandler(key, token, handler, event.id),
    };
  }

  /**
   * With an inbox, the event is queued (its claim settled by that) instead of handled here. A chain,
   * not an async function, and a store that answers at once settled at once, in the turn the enqueue
   * is known to have landed: the answer is that turn's.
   */
  function enqueue(
    key: string,
    token: string,
    event: AnyWebhookEvent,
    header: (name: string) => string | undefined,
    inbox: NonNullable<ResolvedDispatchOptions['inbox']>,
    text: string | undefined,
  ): Promise<DispatchResult> {
    // Held before the enqueue begins: an Inbox of the app's may call back at once (a thenable that
    // settles synchronously), and the continuation that frees the event must find it held, or the
    // entry set after it would never leave (every redelivery a 409, idle() waiting for ever).
    const { id, type } = event;
    const entry: RunningEvent = { eventId: id, done: NOT_YET };
    running.set(key, entry);
    const queued = enqueueDelivery(
      inbox,
      key,
      event,
      header,
      enqueueDeadlines,
      log,
      tracing.traceparent(),
      (outcome) => settleQueued(outcome, key, token, id, type),
      undefined,
      text,
    );
    // An entry freed already was emptied (its eventId ''), and is no longer the map's.
    if (entry.eventId !== '') entry.done = queued;
    return queued;
  }

  /** The claim of a queued (or not queued) event settled with the enqueue's outcome, then answered. */
  function settleQueued(
    outcome: Outcome,
    key: string,
    token: string,
    id: string,
    type: string,
  ): DispatchResult | Promise<DispatchResult> {
    try {
      if (store === undefined) return queuedAnswer(outcome, key, id, type);
      const now = store.now;
      if (now === undefined)
        return store
          .settle(key, token, outcome, id, NO_LINGER, false)
          .then((settled) => queuedAnswer(settled, key, id, type), freedThenThrow(key));
      return queuedAnswer(now.settle(key, token, outcome, id, NO_LINGER, false), key, id, type);
    } catch (error) {
      return freedThenThrow(key)(error);
    }
  }

  /**
   * The event freed whatever broke a chain that cannot break today (the enqueue and the settle never
   * reject), so a later change that lets one throw costs an error, not a key held for good: every
   * later delivery of that event a 409, and `idle()` waiting forever.
   */
  function freedThenThrow(key: string): (error: unknown) => never {
    return (error) => {
      running.delete(key);
      throw error;
    };
  }

  /** The answer to a delivery once its enqueue and its claim's settle are over; the event freed here. */
  function queuedAnswer(outcome: Outcome, key: string, id: string, type: string): DispatchResult {
    running.delete(key);
    if (outcome.ok) return results.queued(id, type);
    const full = outcome.errors.find((e): e is InboxFull => e instanceof InboxFull);
    if (full === undefined) return results.inboxUnavailable();
    warn(
      'warn',
      'shed-queue-depth',
      { depth: full.depth, maxDepth: full.maxDepth },
      `shed a delivery: the inbox holds ${full.depth} events, more than its maxDepth ${full.maxDepth}; answered 503 + Retry-After, the Service retries it`,
    );
    return results.inboxFull();
  }

  /**
   * Not an async function: with a store that answers at once and handlers that return no promise, the
   * result itself comes back, no promise made; a claim or a run that waits hands on its promise.
   */
  function dispatchNow(
    event: AnyWebhookEvent,
    header: (name: string) => string | undefined,
    text?: string,
  ): DispatchResult | Promise<DispatchResult> {
    const key = idempotencyKey(scope, event.source, event.id);
    if (running.has(key)) return results.conflict();
    const token = claimToken();
    const matched = router.match(event.type);
    if (store === undefined) return claimed('claimed', key, token, event, matched, header, text);
    const now = store.now;
    if (now !== undefined) {
      // Answered at once: nothing can come between the claim and the run, so nothing to hold yet.
      const claim =
        counting === undefined ? now.claim(key, token, event.id) : now.claimHandlers(key, token, event.id);
      return claimed(claim, key, token, event, matched, header, text);
    }
    // Held locally from here, so a second delivery in this process never reaches the store or a
    // handler; until the handlers start, the claim is what idle() waits for (it never rejects).
    // A store that records handlers says, in the same one step, which succeeded before and how
    // many runs failed; a new event's claim is the same one step as a plain claim.
    const claiming =
      counting === undefined ? store.claim(key, token, event.id) : counting(key, token, event.id);
    running.set(key, { eventId: event.id, done: claiming });
    return claiming.then((claim) => claimed(claim, key, token, event, matched, header, text));
  }

  /** After the claim: refused, queued, or the handlers run and answered for. */
  function claimed(
    claim: ClaimResult | HandlersClaim | 'unavailable',
    key: string,
    token: string,
    event: AnyWebhookEvent,
    matched: MatchedHandlers,
    header: (name: string) => string | undefined,
    text: string | undefined,
  ): DispatchResult | Promise<DispatchResult> {
    let succeeded: readonly string[] = NONE;
    let attempt = 1;
    let result: ClaimResult | 'unavailable';
    if (typeof claim === 'string') result = claim;
    else {
      result = claim.result;
      succeeded = claim.succeeded;
      attempt = claim.attempt ?? 1;
    }
    if (result !== 'claimed') {
      running.delete(key);
      return refusal(result, event);
    }
    if (options.inbox !== undefined) return enqueue(key, token, event, header, options.inbox, text);
    const ctx = new DeliveryContext(header, log);
    const started = performance.now();
    const work = run(key, token, event, matched, ctx, succeeded, attempt, started);
    if (!(work instanceof Promise)) {
      // Over at once: a lone handler's run was timed from `started` as it settled, and that is the
      // handlers' time, without reading the clock again.
      const { runs } = ctx;
      const lone =
        runs !== undefined && runs.length === 1 && matched.handlers.length === 1 ? runs[0] : undefined;
      return answered(work, event, matched, ctx, succeeded, attempt, started, lone?.durationMs ?? undefined);
    }
    running.set(key, { eventId: event.id, done: work });
    return deadlines
      .wait(work, started)
      .then((first) => answered(first, event, matched, ctx, succeeded, attempt, started));
  }

  function answered(
    first: GuardedRun | typeof TIMED_OUT,
    event: AnyWebhookEvent,
    matched: MatchedHandlers,
    ctx: DeliveryContext,
    succeeded: readonly string[],
    attempt: number,
    started: number,
    ranMs?: number,
  ): DispatchResult {
    const handlerMs = ranMs ?? performance.now() - started;
    const result = answer(first, event, matched, ctx, handlerMs);
    const runs = handlerRuns(first, matched, ctx, succeeded, attempt, handlerMs);
    if (runs !== undefined) result.handlers = runs;
    return result;
  }

  /**
   * Each matching handler and how it fared: the runs reported as they settled, plus those that did
   * not run (done before, stale) or still run (timed out). Undefined when none was decided.
   */
  function handlerRuns(
    first: GuardedRun | typeof TIMED_OUT,
    matched: MatchedHandlers,
    ctx: DeliveryContext,
    succeeded: readonly string[],
    attempt: number,
    handlerMs: number,
  ): readonly HandlerRun[] | undefined {
    const { runs } = ctx;
    // Every handler ran and settled (the common case): the list as reported.
    if (runs !== undefined && runs.length === matched.handlers.length) return runs;
    if (first !== TIMED_OUT && (first.kind === 'busy' || first.kind === 'unavailable')) return undefined;
    const stale = first !== TIMED_OUT && (first.kind === 'stale' || first.ordering === 'stale');
    const all: HandlerRun[] = [];
    for (const h of matched.handlers) {
      const handler = matched.names.get(h) ?? '';
      const reported = runs?.find((r) => r.handler === handler);
      if (reported !== undefined) all.push(reported);
      else if (succeeded.includes(handler))
        all.push({ handler, outcome: 'skipped-done', attempt: null, durationMs: null });
      else if (stale && matched.ordered.includes(h))
        all.push({ handler, outcome: 'skipped-stale', attempt: null, durationMs: null });
      else if (first === TIMED_OUT) all.push({ handler, outcome: 'timeout', attempt, durationMs: handlerMs });
    }
    return all.length === 0 ? undefined : all;
  }

  return {
    dispatchNow,
    async dispatch(event, header, text) {
      return dispatchNow(event, header, text);
    },
    running: () => [...running.values()].map((r) => r.eventId),
    async idle() {
      let before: RunningEvent[] = [];
      while (running.size > 0) {
        const now = [...running.values()];
        // The same entries as the last round, all of them settled: one was left behind (a bug, as an
        // enqueue answering within its call once was). Awaiting them again would spin on microtasks
        // for ever and starve every timer, drain()'s bound included; a slow look instead, on a timer
        // that keeps no process open.
        if (now.length === before.length && now.every((entry, i) => entry === before[i]))
          await new Promise((resolve) => {
            const timer: { unref?: () => void } = setTimeout(resolve, STUCK_LOOK_MS);
            timer.unref?.();
          });
        before = now;
        await Promise.allSettled(now.map((r) => r.done));
      }
    },
  };
}
