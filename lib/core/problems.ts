import type { AnyWebhookEvent } from '../events/webhook-event';
import type { DeliveryOutcome, HandlerRun, ShedReason } from './delivery-record';
import { HttpProblem } from './http-problem';
import type { TokenCheck } from './auth/token-verifier';
import type { Answer } from './webhook-request';

/*
 * Every answer the core can give, in one place: the problem+json answers (RFC 9457) of each step,
 * and the acknowledgement of an event. Built once where they never change, per failure otherwise
 * (a failure is never the hot path).
 */

/** The acknowledgement's one header, `Content-Type`; a door that sets it by name reads it here. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** A problem as problem+json; the body holds only what was built for the client. */
export function problemAnswer(problem: HttpProblem): Answer {
  const headers: Record<string, string> = { ...problem.headers };
  // An unread body would otherwise be drained byte by byte to keep the socket alive.
  if (problem.closeConnection) headers.Connection = 'close';
  headers['Cache-Control'] = 'no-store';
  headers['Content-Type'] = 'application/problem+json; charset=utf-8';
  return { status: problem.status, headers, body: JSON.stringify(problem.toJSON()) };
}

/**
 * Shared by every acknowledgement: no door writes into an answer's headers (frozen, so none can), and
 * a door may know an acknowledgement's headers by identity.
 */
export const ACK_HEADERS: Record<string, string> = Object.freeze({ 'Content-Type': JSON_TYPE });

/**
 * A string as JSON: quoted as it is when no character of it needs escaping (an id, a type: commonly
 * plain ASCII), which costs a loop in JS instead of a call into the runtime per field and event; by
 * `JSON.stringify` otherwise (a quote, a backslash, a control character, any surrogate).
 */
function jsonString(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(value);
  }
  return `"${value}"`;
}

/** The acknowledgement of an event: 200 with its id, type and what became of it. */
export function eventAnswer(
  id: string,
  type: string,
  status: 'processed' | 'unhandled' | 'duplicate' | 'stale' | 'queued' | 'quarantined',
): Answer {
  return {
    status: 200,
    headers: ACK_HEADERS,
    body: `{"id":${jsonString(id)},"type":${jsonString(type)},"status":"${status}"}`,
  };
}

/** Built once: the answers for a method other than POST, and for a failure of the receiver itself. */
export const NOT_ALLOWED = new HttpProblem({
  status: 405,
  slug: 'method-not-allowed',
  title: 'Method Not Allowed',
  detail: 'The webhook receiver only accepts POST.',
  headers: { Allow: 'POST' },
  closeConnection: true,
});

export const INTERNAL = new HttpProblem({
  status: 500,
  slug: 'internal-error',
  title: 'Internal Server Error',
  detail: 'The receiver failed while handling this delivery; the Service will retry it.',
});

const REALM = 'Bearer realm="service-webhooks"';

const DETAILS = {
  missing: {
    header: REALM,
    detail:
      'No bearer token: send "Authorization: Bearer <token>" with the token the Service generated for this webhook.',
  },
  malformed: {
    header: `${REALM}, error="invalid_request"`,
    detail: 'The Authorization header is not of the form "Bearer <token>".',
  },
  invalid: {
    header: `${REALM}, error="invalid_token"`,
    detail: "The bearer token is not one this receiver accepts; check it matches the webhook's token.",
  },
} as const;

/** The answer for a failed token check: RFC 6750 401s, or 503 when the token source itself failed. */
export function unauthorized(check: Exclude<TokenCheck, 'valid'>, retryAfter = '30'): HttpProblem {
  if (check === 'unavailable') {
    return new HttpProblem({
      status: 503,
      slug: 'tokens-unavailable',
      title: 'Service Unavailable',
      detail: 'The receiver cannot read its bearer tokens right now; retry later.',
      headers: { 'Retry-After': retryAfter },
      closeConnection: true,
    });
  }
  const { header, detail } = DETAILS[check];
  return new HttpProblem({
    status: 401,
    slug: check === 'missing' ? 'missing-token' : 'invalid-token',
    title: 'Unauthorized',
    detail,
    field: 'Authorization',
    headers: { 'WWW-Authenticate': header },
    closeConnection: true,
  });
}

/**
 * The answer to a delivery shed to keep a bound: 503 with the receiver's `Retry-After`. Its body was
 * not read, so the connection is closed rather than kept for another request.
 */
export function shed(reason: ShedReason, retryAfter: string): HttpProblem {
  return new HttpProblem({
    status: 503,
    slug: `shed-${reason}`,
    title: 'Service Unavailable',
    detail:
      reason === 'in-flight'
        ? 'The receiver is handling as many deliveries as it takes at once; retry later.'
        : 'The receiver’s queue holds as many events as it takes; retry later.',
    headers: { 'Retry-After': retryAfter },
    closeConnection: true,
  });
}

/** The answers a body read can end in; built per failure, which is never the hot path. */
export const bodyProblems = {
  tooLarge: (limit: number) =>
    new HttpProblem({
      status: 413,
      slug: 'payload-too-large',
      title: 'Content Too Large',
      detail: `The request body exceeds the receiver's limit of ${limit} bytes.`,
      closeConnection: true,
    }),
  timeout: (timeoutMs: number) =>
    new HttpProblem({
      status: 408,
      slug: 'body-timeout',
      title: 'Request Timeout',
      detail: `The request body did not arrive within ${timeoutMs} ms.`,
      closeConnection: true,
    }),
  lengthMismatch: () =>
    new HttpProblem({
      status: 400,
      slug: 'body-length-mismatch',
      title: 'Bad Request',
      detail: 'The request body does not match its Content-Length.',
      closeConnection: true,
    }),
  aborted: () =>
    new HttpProblem({
      status: 400,
      slug: 'body-aborted',
      title: 'Bad Request',
      detail: 'The client aborted the request body.',
      closeConnection: true,
    }),
  unreadable: () =>
    new HttpProblem({
      status: 400,
      slug: 'body-unreadable',
      title: 'Bad Request',
      detail: 'The request body could not be read.',
      closeConnection: true,
    }),
};

/** The answer to one delivery and what it says, for the delivery record. */
export interface DispatchResult {
  answer: Answer;
  outcome: DeliveryOutcome;
  problem: string | null;
  handlerMs: number | null;
  /** What the ordering guard decided, when ordered handlers matched an event it could order. */
  ordering?: 'newest' | 'stale';
  /** Set when the delivery was shed (the inbox full). */
  shed?: ShedReason;
  /** Each matching handler and how it fared, once they were decided (see DeliveryRecord.handlers). */
  handlers?: readonly HandlerRun[];
}

type AcknowledgedStatus = 'processed' | 'unhandled' | 'duplicate' | 'stale' | 'queued';

/** A 2xx answer naming the event, and what the record takes from it. */
function acknowledgedAs(
  id: string,
  type: string,
  status: AcknowledgedStatus,
  handlerMs: number | null,
  ordering?: 'newest' | 'stale',
): DispatchResult {
  const result: DispatchResult = {
    answer: eventAnswer(id, type, status),
    outcome: status,
    problem: null,
    handlerMs,
  };
  if (ordering !== undefined) result.ordering = ordering;
  return result;
}

/** The answers dispatch can give, built from the receiver's `Retry-After`. */
export function dispatchResults(retryAfter: string) {
  const problem = (
    outcome: DeliveryOutcome,
    p: HttpProblem,
    handlerMs: number | null = null,
  ): DispatchResult => ({
    answer: problemAnswer(p),
    outcome,
    problem: p.slug,
    handlerMs,
  });
  const later = (status: 409 | 503, slug: string, title: string, detail: string, after = retryAfter) =>
    new HttpProblem({ status, slug, title, detail, headers: { 'Retry-After': after } });
  return {
    conflict: () =>
      problem(
        'conflict',
        later(
          409,
          'in-progress',
          'Conflict',
          'This event is being processed by another delivery; retry later.',
        ),
      ),
    entityBusy: () =>
      problem(
        'conflict',
        later(
          409,
          'entity-in-progress',
          'Conflict',
          'Another event of the same entity is being processed; retry later.',
        ),
      ),
    inboxUnavailable: () =>
      problem(
        'store-unavailable',
        later(
          503,
          'inbox-unavailable',
          'Service Unavailable',
          'The receiver cannot queue this event right now; retry later.',
        ),
      ),
    inboxFull: (): DispatchResult => ({
      ...problem('rejected', shed('queue-depth', retryAfter)),
      shed: 'queue-depth',
    }),
    storeUnavailable: () =>
      problem(
        'store-unavailable',
        later(
          503,
          'store-unavailable',
          'Service Unavailable',
          'The receiver cannot record deliveries right now; retry later.',
        ),
      ),
    timeout: (timeoutMs: number, handlerMs: number) =>
      problem(
        'timeout',
        later(
          503,
          'handler-timeout',
          'Service Unavailable',
          `The handlers did not finish within ${timeoutMs} ms; retry later.`,
        ),
        handlerMs,
      ),
    retryLater: (seconds: number | undefined, handlerMs: number) =>
      problem(
        'failed',
        later(
          503,
          'retry-later',
          'Service Unavailable',
          'A handler asked for this event to be delivered again later.',
          seconds === undefined ? retryAfter : String(seconds),
        ),
        handlerMs,
      ),
    failed: (handlerMs: number) =>
      problem(
        'failed',
        new HttpProblem({
          status: 500,
          slug: 'handler-failed',
          title: 'Internal Server Error',
          detail: 'A handler failed to process the event; it will be processed again on retry.',
        }),
        handlerMs,
      ),
    acknowledged: (
      event: AnyWebhookEvent,
      status: AcknowledgedStatus,
      handlerMs: number | null,
      ordering?: 'newest' | 'stale',
    ): DispatchResult => acknowledgedAs(event.id, event.type, status, handlerMs, ordering),
    /** `acknowledged(event, 'queued', null)` from the event's id and type alone. */
    queued: (id: string, type: string): DispatchResult => acknowledgedAs(id, type, 'queued', null),
  };
}
