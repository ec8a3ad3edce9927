import { callContained } from '../call-contained';
import { drain, type DrainResult } from './dispatch/drain';
import { requestsInFlight } from './dispatch/requests-in-flight';
import { OptionsError } from '../options-error';
import { newDeliveryRecord, type DeliveryRecord } from './delivery-record';
import { INTERNAL, NOT_ALLOWED, problemAnswer, shed, unauthorized } from './problems';
import { createDispatcher, type DispatchResult } from './dispatch/dispatcher';
import { certificateStep } from './auth/certificate-step';
import { answerHandshake } from './auth/handshake';
import { HttpProblem } from './http-problem';
import { rateLimitedLog, type RateLimitedLog } from '../rate-limited-log';
import { createEventReading, type ReadEvent } from './event/read-event';
import { UnreadableEvent } from './event/unreadable-event';
import { quarantineStep } from './quarantine-step';
import type { ReceiverOptions } from './receiver-options';
import type { DeliveryTrace, TracingHooks } from './tracing';
import { resolveReceiverOptions } from './resolve-receiver-options';
import type { Answer, WebhookRequest } from './webhook-request';
import type { TokenCheck } from './auth/token-verifier';

export type { DrainResult };

/** What one request came to: the answer to write, and the record to report once it is written. */
export interface Handled {
  answer: Answer;
  record: DeliveryRecord;
}

export interface ReceiverCore {
  /** The whole pipeline for one request. Never rejects: every failure is an answer. */
  handle(request: WebhookRequest): Promise<Handled>;
  /**
   * The same, for a door that takes a result as readily as a promise of one: a delivery whose body,
   * store and handlers all answered at once comes back itself, no promise made and no turn waited
   * before the door writes it. Never rejects.
   */
  handleNow(request: WebhookRequest): Handled | Promise<Handled>;
  /**
   * The same, handed to `next` with `context` in the turn it is known (at once when nothing waited):
   * a door that writes in `next` waits no turn of a promise of its own, and passing what it writes to
   * as `context` lets `next` be one function for every request. `next` must not throw; what it
   * returns comes back, or a promise of it when the request waited.
   */
  handleWith<C, R>(
    request: WebhookRequest,
    context: C,
    next: (handled: Handled, context: C) => R,
  ): R | Promise<R>;
  /** Hands a record to `onDelivery`, contained; adapters call it once the answer is written. */
  report(record: DeliveryRecord): void;
  /**
   * Resolves once every request that entered the receiver has been answered and every handler has
   * settled, or after `timeoutMs`; call it on shutdown, after the server stops accepting.
   */
  drain(options?: { timeoutMs?: number }): Promise<DrainResult>;
}

/**
 * The receiver with no transport: handshake, auth, bounded read, envelope, dispatch, one record per
 * request. It traces through the hooks it is given (the doors give OpenTelemetry's).
 */
/**
 * What a step of the pipeline comes to, at once or as a promise: an answer, or a dispatch's result,
 * which is recorded where it is answered (see `dispatched`).
 */
type Step = Answer | DispatchResult | Promise<Answer | DispatchResult>;

const same = (handled: Handled): Handled => handled;
const INTERNAL_ANSWER = problemAnswer(INTERNAL);

export function createReceiverCore(
  options: ReceiverOptions,
  where: string,
  tracing: TracingHooks,
  extraKeys: readonly string[] = [],
): ReceiverCore {
  const resolved = resolveReceiverOptions(options, where, extraKeys);
  const { verifier, log, onDelivery, bodyTimeoutMs } = resolved;
  const listener = options.onDelivery;
  if (listener?.onRequestStart !== undefined && typeof listener.onRequestStart !== 'function')
    throw new OptionsError('ERR_SW_OPTION', where, 'onDelivery.onRequestStart must be a function, or absent');
  const onRequestStart = listener?.onRequestStart?.bind(listener);
  if (listener?.onBookkeeping !== undefined && typeof listener.onBookkeeping !== 'function')
    throw new OptionsError('ERR_SW_OPTION', where, 'onDelivery.onBookkeeping must be a function, or absent');
  const onBookkeeping = listener?.onBookkeeping?.bind(listener);
  if (listener?.onEvent !== undefined && typeof listener.onEvent !== 'function')
    throw new OptionsError('ERR_SW_OPTION', where, 'onDelivery.onEvent must be a function, or absent');
  const onEvent = listener?.onEvent?.bind(listener);
  const warn: RateLimitedLog = rateLimitedLog(log);
  const certificates = resolved.certificates && certificateStep(resolved.certificates, warn);
  const readThen = createEventReading({
    limit: resolved.limit,
    bodyTimeoutMs,
    validation: resolved.validation,
    log,
    quarantine: resolved.quarantine,
    keepText: resolved.dispatch.inbox !== undefined,
  });
  const dispatcher = createDispatcher(
    resolved.router,
    resolved.dispatch,
    log,
    warn,
    tracing,
    onBookkeeping && ((event) => contained('onDelivery.onBookkeeping', () => onBookkeeping(event))),
  );
  const tracingFailed = (error: unknown) =>
    warn('error', 'tracing', { err: error }, 'the OpenTelemetry SDK threw; this delivery is not traced');
  const { inbox, scope, storeTimeoutMs } = resolved.dispatch;
  const quarantine =
    resolved.quarantine && inbox !== undefined
      ? quarantineStep({ inbox, scope, storeTimeoutMs, retryAfter: resolved.dispatch.retryAfter, log, warn })
      : undefined;
  const handshake = { verifier, requireToken: resolved.requireTokenOnHandshake, bodyTimeoutMs, warn };
  const retryAfter = resolved.dispatch.retryAfter;
  const requests = requestsInFlight();
  const { maxInFlight } = resolved;
  /** Deliveries past the token check and not yet answered: what `maxInFlight` bounds. */
  let inFlight = 0;

  /**
   * The steps before the body: method, certificate, handshake, token. Neither these nor the steps
   * after them are async functions: a delivery whose token, body, store and handler all answer at
   * once is answered without a promise (an async frame and its promise cost about as much as a stage
   * of the pipeline); a step that waits hands a promise on, and a step that fails throws, which
   * `handle` answers either way.
   */
  function pipeline(request: WebhookRequest, record: DeliveryRecord, span: DeliveryTrace | undefined): Step {
    if (request.method !== 'POST') throw NOT_ALLOWED;
    // The handshake comes over the same mutual TLS as deliveries, so it is checked the same way.
    const refused = certificates?.(request);
    if (refused !== undefined) throw refused;
    const echo = answerHandshake(request, handshake);
    if (echo !== undefined) {
      return echo.then((answer) => {
        record.outcome = 'handshake';
        return answer;
      });
    }
    const pending = verifier?.check(request.header('authorization')) ?? 'valid';
    if (typeof pending === 'string') return authenticated(pending, request, record, span);
    return pending.then((check) => authenticated(check, request, record, span));
  }

  /** A delivery whose token was checked: refused, shed, or read and dispatched. */
  function authenticated(
    check: TokenCheck,
    request: WebhookRequest,
    record: DeliveryRecord,
    span: DeliveryTrace | undefined,
  ): Step {
    if (check !== 'valid') {
      warn(
        'warn',
        `token-${check}`,
        {},
        `refused a delivery: bearer token ${check}; the Service will retry it and drop it after 6 hours`,
      );
      throw unauthorized(check, retryAfter);
    }
    if (span !== undefined) span.authenticated = true;
    if (maxInFlight === undefined) return delivered(request, record, span);
    // Counted after the token check, so unauthenticated requests cannot crowd real ones out, and
    // before the body is read, so a shed request costs no read and no store call.
    if (inFlight >= maxInFlight) {
      warn(
        'warn',
        'shed-in-flight',
        { maxInFlight },
        `shed a delivery: ${maxInFlight} deliveries in flight (maxInFlight); answered 503 + Retry-After, the Service retries it`,
      );
      record.shed = 'in-flight';
      throw shed('in-flight', retryAfter);
    }
    inFlight++;
    let answer: Step;
    try {
      answer = delivered(request, record, span);
    } catch (error) {
      inFlight--;
      throw error;
    }
    if (answer instanceof Promise) return answer.finally(() => inFlight--);
    inFlight--;
    return answer;
  }

  /** The rest of an authenticated delivery: its body read, its event dispatched. */
  function delivered(request: WebhookRequest, record: DeliveryRecord, span: DeliveryTrace | undefined): Step {
    // The reader writes the event's id, type and source into the record as soon as the envelope is
    // checked, so a 400 for the data still names its event. Untraced (no SDK), the continuation is
    // the same function for every request, no closure over this one.
    if (span === undefined) return readThen(request, record, untraced, unreadable);
    return readThen(request, record, (read) => dispatched(read, request, record, span), unreadable);
  }

  function untraced(read: ReadEvent, request: WebhookRequest, record: DeliveryRecord): Step {
    return dispatched(read, request, record, undefined);
  }

  /** A body that could not be read as an event: quarantined when that is on and it can be, else thrown. */
  function unreadable(error: unknown, request: WebhookRequest, record: DeliveryRecord): Promise<Answer> {
    if (quarantine === undefined || !(error instanceof UnreadableEvent)) throw error;
    return quarantine(error, request.header, tracing.traceparent(), record);
  }

  /**
   * A read event, dispatched. Its result is handed on as it is, or its promise: `handleWith` writes
   * it into the record as it answers (a `.then` here would cost every queued delivery a promise and
   * a turn).
   */
  function dispatched(
    read: ReadEvent,
    request: WebhookRequest,
    record: DeliveryRecord,
    span: DeliveryTrace | undefined,
  ): Step {
    const { envelope, event } = read;
    span?.begin(envelope, event);
    record.eventId = event.id;
    record.type = event.type;
    record.source = event.source;
    record.layout = event.layout;
    if (onEvent !== undefined) contained('onDelivery.onEvent', () => onEvent(event.raw, record));
    return span === undefined
      ? dispatcher.dispatchNow(event, request.header, read.text)
      : span.around(() => dispatcher.dispatchNow(event, request.header, read.text));
  }

  function recorded(result: DispatchResult, record: DeliveryRecord): Answer {
    record.outcome = result.outcome;
    record.problem = result.problem;
    record.handlerMs = result.handlerMs;
    if (result.ordering !== undefined) record.ordering = result.ordering;
    if (result.shed !== undefined) record.shed = result.shed;
    if (result.handlers !== undefined) record.handlers = result.handlers;
    if (result.answer.status === 200)
      log.debug(
        { eventId: record.eventId, type: record.type, outcome: result.outcome },
        'acknowledged a delivery',
      );
    return result.answer;
  }

  function failure(error: unknown, record: DeliveryRecord): Answer {
    if (error instanceof HttpProblem) {
      record.problem = error.slug;
      if (error.status < 500 && error.status !== 401) {
        warn(
          'warn',
          error.slug,
          { status: error.status, eventId: record.eventId },
          `refused a delivery: ${error.detail}`,
        );
      }
      return problemAnswer(error);
    }
    log.error({ err: error }, 'unexpected error in the receiver; answering 500');
    record.outcome = 'failed';
    record.problem = INTERNAL.slug;
    return problemAnswer(INTERNAL);
  }

  /** {@link handleNow}'s answer, always as a promise. */
  function handle(request: WebhookRequest): Promise<Handled> {
    const handled = handleNow(request);
    return handled instanceof Promise ? handled : Promise.resolve(handled);
  }

  function handleNow(request: WebhookRequest): Handled | Promise<Handled> {
    return handleWith(request, undefined, same);
  }

  /**
   * Not an async function: a delivery answered at once is handed to `next` as it is, and only one
   * that waits is counted for `drain()` (a count, not a set of promises: see `requestsInFlight`).
   */
  function handleWith<C, R>(
    request: WebhookRequest,
    context: C,
    next: (handled: Handled, context: C) => R,
  ): R | Promise<R> {
    let started = 0;
    let record: DeliveryRecord | undefined;
    let span: DeliveryTrace | undefined;
    let work: Step;
    try {
      if (onRequestStart !== undefined) contained('onDelivery.onRequestStart', onRequestStart);
      started = performance.now();
      record = newDeliveryRecord(request.header('x-service-webhook-attempt'));
      // Undefined, and no span work at all, while no OpenTelemetry SDK is registered.
      span = tracing.startDelivery(request, started, tracingFailed);
      work = pipeline(request, record, span);
    } catch (error) {
      record ??= newDeliveryRecord(undefined);
      return next(answered(failure(error, record), record, started, span), context);
    }
    if (!(work instanceof Promise))
      return next(answered(settledAnswer(work, record), record, started, span), context);
    // Tracked until it settles, rejections included: drain() waits for it. A step that answered or
    // threw before any wait left nothing to track.
    requests.enter();
    const entered = record;
    return work.then(
      (value) => next(finished(value, false, entered, started, span), context),
      (error: unknown) => next(finished(error, true, entered, started, span), context),
    );
  }

  /**
   * A request that waited, answered. Whatever throws while answering it is answered 500 here: the
   * promise `handleWith` hands back never rejects, so a door that writes in `next` has no rejection
   * to catch, and none goes unhandled.
   */
  function finished(
    outcome: unknown,
    rejected: boolean,
    record: DeliveryRecord,
    started: number,
    span: DeliveryTrace | undefined,
  ): Handled {
    requests.leave();
    try {
      const answer = rejected
        ? failure(outcome, record)
        : settledAnswer(outcome as Answer | DispatchResult, record);
      return answered(answer, record, started, span);
    } catch {
      record.status = 500;
      record.outcome = 'failed';
      record.problem = INTERNAL.slug;
      return { answer: INTERNAL_ANSWER, record };
    }
  }

  /** What a step came to, as the answer: a dispatch's result recorded first. */
  function settledAnswer(value: Answer | DispatchResult, record: DeliveryRecord): Answer {
    if (!('answer' in value)) return value;
    try {
      return recorded(value, record);
    } catch (error) {
      return failure(error, record);
    }
  }

  function answered(
    answer: Answer,
    record: DeliveryRecord,
    started: number,
    span: DeliveryTrace | undefined,
  ): Handled {
    record.status = answer.status;
    record.durationMs = performance.now() - started;
    span?.end(record);
    return { answer, record };
  }

  function contained(what: string, call: () => unknown): void {
    callContained(call, (error) =>
      warn('error', 'on-delivery', { err: error }, `${what} threw; the answer was not affected`),
    );
  }

  function report(record: DeliveryRecord): void {
    if (onDelivery !== undefined) contained('onDelivery', () => onDelivery(record));
  }

  return {
    handle,
    handleNow,
    handleWith,
    report,
    drain: (drainOptions) => drain(requests, dispatcher, drainOptions),
  };
}
