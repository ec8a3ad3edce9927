import { callContained } from '../call-contained';
import { drain, type DrainResult } from './dispatch/drain';
import { OptionsError } from '../options-error';
import { newDeliveryRecord, type DeliveryRecord } from './delivery-record';
import { INTERNAL, NOT_ALLOWED, problemAnswer, shed, unauthorized } from './problems';
import { createDispatcher, type DispatchResult } from './dispatch/dispatcher';
import { certificateStep } from './auth/certificate-step';
import { answerHandshake } from './auth/handshake';
import { HttpProblem } from './http-problem';
import { rateLimitedLog, type RateLimitedLog } from '../rate-limited-log';
import { createEventReader, type ReadEvent } from './event/read-event';
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
  const readEvent = createEventReader({
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
  const requests = new Set<Promise<unknown>>();
  const { maxInFlight } = resolved;
  /** Deliveries past the token check and not yet answered: what `maxInFlight` bounds. */
  let inFlight = 0;

  /**
   * The steps before the body: method, certificate, handshake, token. Not an async function: the
   * common request (a POST with a token checked at once) goes straight on to `delivered`, one frame
   * and one promise turn fewer; a step that fails throws, which `handle` answers.
   */
  function pipeline(
    request: WebhookRequest,
    record: DeliveryRecord,
    span: DeliveryTrace | undefined,
  ): Promise<Answer> {
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
  ): Promise<Answer> {
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
    return delivered(request, record, span).finally(() => inFlight--);
  }

  /** The rest of an authenticated delivery: its body read, its event dispatched. */
  async function delivered(
    request: WebhookRequest,
    record: DeliveryRecord,
    span: DeliveryTrace | undefined,
  ): Promise<Answer> {
    // Known as soon as the envelope is checked, so a 400 for the data still names its event.
    let read: ReadEvent;
    try {
      read = await readEvent(request, record);
    } catch (error) {
      if (quarantine === undefined || !(error instanceof UnreadableEvent)) throw error;
      return quarantine(error, request.header, tracing.traceparent(), record);
    }
    const { envelope, event } = read;
    span?.begin(envelope, event);
    record.eventId = event.id;
    record.type = event.type;
    record.source = event.source;
    record.layout = event.layout;
    if (onEvent !== undefined) contained('onDelivery.onEvent', () => onEvent(event.raw, record));
    const result: DispatchResult = await (span === undefined
      ? dispatcher.dispatch(event, request.header, read.text)
      : span.around(() => dispatcher.dispatch(event, request.header, read.text)));
    record.outcome = result.outcome;
    record.problem = result.problem;
    record.handlerMs = result.handlerMs;
    if (result.ordering !== undefined) record.ordering = result.ordering;
    if (result.shed !== undefined) record.shed = result.shed;
    if (result.handlers !== undefined) record.handlers = result.handlers;
    if (result.answer.status === 200)
      log.debug({ eventId: event.id, type: event.type, outcome: result.outcome }, 'acknowledged a delivery');
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

  async function handle(request: WebhookRequest): Promise<Handled> {
    if (onRequestStart !== undefined) contained('onDelivery.onRequestStart', onRequestStart);
    const started = performance.now();
    const record = newDeliveryRecord(request.header('x-service-webhook-attempt'));
    // Undefined, and no span work at all, while no OpenTelemetry SDK is registered.
    const span = tracing.startDelivery(request, started, tracingFailed);
    let answer: Answer;
    let work: Promise<Answer> | undefined;
    try {
      work = pipeline(request, record, span);
      // Tracked as it is, rejections included: drain() only waits for it to settle. A step that
      // threw before any wait left nothing to track.
      requests.add(work);
      answer = await work;
    } catch (error) {
      answer = failure(error, record);
    } finally {
      if (work !== undefined) requests.delete(work);
    }
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

  return { handle, report, drain: (drainOptions) => drain(requests, dispatcher, drainOptions) };
}
