import type { EventRouter } from '../events/event-router';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import { MemoryStore } from '../idempotency/memory-store';
import type { AnyWebhookEvent } from '../events/webhook-event';
import type { ResolvedLogger } from '../logger';
import { eventAnswer, problemAnswer } from './answers';
import type { DeliveryOutcome } from './delivery-record';
import type { ResolvedDispatchOptions } from './dispatch-options';
import { DeliveryContext } from './handler-context';
import { HttpProblem } from './http-problem';
import { claimToken, idempotencyKey } from './idempotency-key';
import type { RateLimitedLog } from './rate-limited-log';
import { runHandlers, type Outcome } from './run-handlers';
import type { Answer } from './webhook-request';
import { withTimeout } from './with-timeout';

/** The answer to one delivery and what it says, for the delivery record. */
export interface DispatchResult {
  answer: Answer;
  outcome: DeliveryOutcome;
  problem: string | null;
  handlerMs: number | null;
}

export interface Dispatcher {
  /** Runs the event's handlers (once, across redeliveries) and answers. Never rejects. */
  dispatch(event: AnyWebhookEvent, header: (name: string) => string | undefined): Promise<DispatchResult>;
  /** The ids of events whose handlers (or their store bookkeeping) are still running. */
  running(): string[];
  /** Resolves when nothing is running. */
  idle(): Promise<void>;
}

const TIMED_OUT = Symbol('timed out');

function problemResult(
  outcome: DeliveryOutcome,
  problem: HttpProblem,
  handlerMs: number | null = null,
): DispatchResult {
  return { answer: problemAnswer(problem), outcome, problem: problem.slug, handlerMs };
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
): Dispatcher {
  const { timeoutMs, leaseMs, retentionMs, storeTimeoutMs, retryAfter, scope, store } = options;
  const running = new Map<string, { eventId: string; done: Promise<unknown> }>();
  const inMemory = store instanceof MemoryStore;

  const retryLater = (status: 409 | 503, slug: string, title: string, detail: string, after = retryAfter) =>
    new HttpProblem({ status, slug, title, detail, headers: { 'Retry-After': after } });
  const conflict = () =>
    problemResult(
      'conflict',
      retryLater(
        409,
        'in-progress',
        'Conflict',
        'This event is being processed by another delivery; retry later.',
      ),
    );

  function storeCall<T>(
    what: string,
    call: (s: IdempotencyStore) => Promise<T>,
    late?: (value: T) => void,
  ): Promise<T> {
    try {
      const pending = call(store as IdempotencyStore);
      // The in-memory store answers at once and cannot hang: no timer for it on the hot path.
      if (inMemory) return pending;
      return withTimeout(pending, storeTimeoutMs, `the idempotency store's ${what}`, late);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async function settle(key: string, token: string, outcome: Outcome, eventId: string): Promise<Outcome> {
    if (store === false) return outcome;
    try {
      if (outcome.ok) await storeCall('markDone', (s) => s.markDone(key, token, retentionMs));
      else await storeCall('release', (s) => s.release(key, token));
    } catch (error) {
      log.error(
        { eventId, err: error },
        outcome.ok
          ? 'could not mark the event done; a redelivery may run its handlers again'
          : 'could not release the event; a redelivery waits for its lease to end',
      );
    }
    return outcome;
  }

  async function claim(
    key: string,
    token: string,
    event: AnyWebhookEvent,
  ): Promise<DispatchResult | undefined> {
    if (store === false) return undefined;
    let claimed;
    try {
      // A claim that lands after we answered 503 would hold the event for a whole lease: give it back.
      const giveBack = (late: string) => {
        if (late !== 'claimed') return;
        Promise.resolve()
          .then(() => (store as IdempotencyStore).release(key, token))
          .catch(() => undefined);
      };
      claimed = await storeCall('claim', (s) => s.claim(key, token, leaseMs), giveBack);
    } catch (error) {
      warn(
        'error',
        'store-unavailable',
        { eventId: event.id, err: error },
        'the idempotency store is unavailable; answering 503',
      );
      return problemResult(
        'store-unavailable',
        retryLater(
          503,
          'store-unavailable',
          'Service Unavailable',
          'The receiver cannot record deliveries right now; retry later.',
        ),
      );
    }
    if (claimed === 'done') {
      return {
        answer: eventAnswer(event.id, event.type, 'duplicate'),
        outcome: 'duplicate',
        problem: null,
        handlerMs: null,
      };
    }
    return claimed === 'busy' ? conflict() : undefined;
  }

  async function dispatch(
    event: AnyWebhookEvent,
    header: (name: string) => string | undefined,
  ): Promise<DispatchResult> {
    const key = idempotencyKey(scope, event.source, event.id);
    if (running.has(key)) return conflict();
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
    const work = runHandlers(router, handlers, event, ctx)
      .catch((error: unknown): Outcome => ({ ok: false, errors: [error], retryLater: undefined }))
      .then((outcome) => settle(key, token, outcome, event.id));
    running.set(key, { eventId: event.id, done: work });
    void work.then(() => {
      running.delete(key);
      release();
    });

    let timer: NodeJS.Timeout | undefined;
    const first = await Promise.race([
      work,
      new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(resolve, timeoutMs, TIMED_OUT))),
    ]);
    clearTimeout(timer);
    const handlerMs = performance.now() - started;
    if (first === TIMED_OUT) {
      ctx.abort(new Error('delivery timed out'));
      log.warn(
        { eventId: event.id, type: event.type, timeoutMs },
        'handlers are still running past timeoutMs; answering 503, they go on and decide the outcome',
      );
      const detail = `The handlers did not finish within ${timeoutMs} ms; retry later.`;
      return problemResult(
        'timeout',
        retryLater(503, 'handler-timeout', 'Service Unavailable', detail),
        handlerMs,
      );
    }
    if (!first.ok) {
      if (first.retryLater !== undefined) {
        const after = first.retryLater.retryAfterSeconds;
        const detail = 'A handler asked for this event to be delivered again later.';
        const problem = retryLater(
          503,
          'retry-later',
          'Service Unavailable',
          detail,
          after === undefined ? retryAfter : String(after),
        );
        return problemResult('failed', problem, handlerMs);
      }
      const problem = new HttpProblem({
        status: 500,
        slug: 'handler-failed',
        title: 'Internal Server Error',
        detail: 'A handler failed to process the event; it will be processed again on retry.',
      });
      return problemResult('failed', problem, handlerMs);
    }
    if (!handled)
      log.info(
        { eventId: event.id, type: event.type },
        'no handler for this event type; acknowledged as unhandled',
      );
    const status = handled ? 'processed' : 'unhandled';
    return {
      answer: eventAnswer(event.id, event.type, status),
      outcome: status,
      problem: null,
      // An unhandled type with no onUnhandled or onAny ran nothing: no handler time to report.
      handlerMs: handlers.length === 0 ? null : handlerMs,
    };
  }

  return {
    dispatch,
    running: () => [...running.values()].map((r) => r.eventId),
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running.values()].map((r) => r.done));
    },
  };
}
