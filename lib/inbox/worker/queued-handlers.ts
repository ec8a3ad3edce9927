import type { EventHandler, HandlerContext, MatchedHandlers } from '../../events/event-router';
import type { AnyWebhookEvent } from '../../events/webhook-event';
import type { JobHandlers } from '../handler-states';
import type { DeliveryContext } from '../../core/dispatch/handler-context';
import type { PerHandler } from '../../core/dispatch/run-handlers';
import { warnReturnedValue } from '../../core/dispatch/warn-returned-value';

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
export function queuedHandlers(
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
