import { checkEventRules, type RuleViolation } from '../../events/event-rules';
import { InvalidEventError } from '../../events/invalid-event-error';
import { normalizeEvent } from '../../events/normalize-event';
import type { AnyWebhookEvent } from '../../events/webhook-event';
import type { ResolvedLogger } from '../../logger';
import { binaryEnvelope } from './binary-mode';
import { checkContent } from './check-content';
import { parseCloudEventEnvelope, type CloudEventEnvelope } from './cloud-event-envelope';
import { HttpProblem } from '../http-problem';
import { bodyProblems } from '../problems';
import { UnreadableEvent } from './unreadable-event';
import { decodeUtf8, fromParsedBody, needsScan, parseJsonText } from './parse-json-body';
import type { WebhookRequest } from '../webhook-request';

/** `'strict'` answers 400 to an event that breaks the spec's per-type rules 2–5; `'lenient'` accepts it and logs a warning. */
export type ValidationMode = 'strict' | 'lenient';

export interface EventReaderOptions {
  limit: number;
  bodyTimeoutMs: number;
  validation: ValidationMode;
  log: ResolvedLogger;
  /** Throw {@link UnreadableEvent} instead of the 400 for data this code cannot read. Defaults to `false`. */
  quarantine?: boolean;
  /**
   * Return the body's text with the event (`ReadEvent.text`), for an inbox to queue. Defaults to
   * `false`: a synchronous delivery does not hold its body's text while its handlers run.
   */
  keepText?: boolean;
}

/** A delivery's envelope as checked, and the normalized event its handlers receive. */
export interface ReadEvent {
  envelope: CloudEventEnvelope;
  event: AnyWebhookEvent;
  /**
   * The body's own text, which `event.raw` was parsed from, with `keepText`: in structured mode, when
   * this reader read the body (not binary mode, where the body is the data alone, nor a body another
   * parser read), and the text spells no key the parse drops. The inbox queues it instead of writing
   * the envelope again.
   */
  text?: string;
}

/** An event that breaks spec rules 2–5, answered 400 by a strict receiver: the first one named. */
function ruleProblem(violations: readonly RuleViolation[]): HttpProblem {
  const [first] = violations as [RuleViolation];
  return new HttpProblem({
    status: 400,
    slug: 'event-rule-violated',
    title: 'Bad Request',
    detail: `${first.message} (spec ${first.rule}).`,
    field: first.field,
    errors: violations.map((v) => ({ field: v.field, rule: `${v.message} (spec ${v.rule})` })),
  });
}

/** An event that breaks the rules is the sender's fault: 400, naming the field. */
function invalidEventProblem(error: InvalidEventError): HttpProblem {
  return new HttpProblem({
    status: 400,
    slug: error.slug,
    title: 'Bad Request',
    detail: error.message,
    field: error.field,
    errors: error.errors,
    errorCount: error.errorCount,
  });
}

export function decodeBase64Data(base64: string): unknown {
  const text = decodeUtf8(Buffer.from(base64, 'base64'), 'data_base64');
  try {
    // The same parse as the body's: prototype keys dropped.
    return parseJsonText(text);
  } catch {
    throw new InvalidEventError({
      slug: 'invalid-data',
      detail: 'The event "data_base64" must hold a JSON object (datacontenttype application/json).',
      field: 'data_base64',
    });
  }
}

/**
 * Step 3 as a plain function: content checks, the bounded body read, the CloudEvents envelope (in
 * structured or binary mode), layout detection, normalization and the per-type rules of spec 6.
 */
/**
 * Where the reader writes the event's id, type and source as soon as the envelope is checked, so a
 * 400 for its data still names the event: the delivery record itself, not a closure per request.
 */
export interface EnvelopeSeen {
  eventId: string | null;
  type: string | null;
  source: string | null;
}

export function createEventReader(
  options: EventReaderOptions,
): (request: WebhookRequest, seen?: EnvelopeSeen) => ReadEvent | Promise<ReadEvent> {
  const readThen = createEventReading(options);
  return (request, seen) => readThen(request, seen, same, rethrow);
}

const same = (read: ReadEvent) => read;
const rethrow = (error: unknown): never => {
  throw error;
};

/**
 * Reads a request's event and hands it to `next`, or what failed to `failed`; either one's result is
 * the reading's. `failed` takes what the reader threw or the body's read rejected with, never what
 * `next` throws. `next` and `failed` are given the request and `seen` back, so a caller can pass the
 * same two functions for every request instead of closures over each.
 */
export type EventReading = <S extends EnvelopeSeen | undefined, T>(
  request: WebhookRequest,
  seen: S,
  next: (read: ReadEvent, request: WebhookRequest, seen: S) => T | Promise<T>,
  failed: (error: unknown, request: WebhookRequest, seen: S) => T | Promise<T>,
) => T | Promise<T>;

/**
 * The reader with its continuation: a body that arrives later is read into an event and handed on
 * in the one promise turn of its read, not in a turn of the reader's and another of the caller's.
 */
export function createEventReading(options: EventReaderOptions): EventReading {
  const { limit, bodyTimeoutMs, validation, log } = options;
  const quarantine = options.quarantine === true;
  const keepText = options.keepText === true;
  let warnedParsed = false;

  /** A body a parser before us already read: taken, with one warning that ours did not bound it. */
  function fromOtherParser(parsed: { value: unknown }): unknown {
    if (!warnedParsed) {
      warnedParsed = true;
      log.warn(
        {},
        'another body parser (e.g. app-wide express.json()) read the delivery before the receiver: its size limit applies instead of ours, and the body is read before the token is checked. Mount the receiver before that parser',
      );
    }
    return fromParsedBody(parsed.value);
  }

  /** A body read here, into an event; the reader's errors as the answers they are (see `answerOf`). */
  function fromBytes(
    request: WebhookRequest,
    seen: EnvelopeSeen | undefined,
    binary: boolean,
    bytes: Uint8Array,
  ): ReadEvent {
    try {
      const text = decodeUtf8(bytes);
      // A text that could spell a key the parse dropped (`__proto__`) is not kept: what is queued,
      // and shown on a dead letter, never carries what the receiver refused to read.
      const scan = needsScan(text);
      return event(request, seen, binary, parseJsonText(text, scan), scan ? undefined : text);
    } catch (error) {
      throw answerOf(error);
    }
  }

  function event(
    request: WebhookRequest,
    seen: EnvelopeSeen | undefined,
    binary: boolean,
    body: unknown,
    text: string | undefined,
  ): ReadEvent {
    const raw = binary ? binaryEnvelope((name) => request.header(name), body) : body;
    const envelope = parseCloudEventEnvelope(raw);
    if (seen !== undefined) {
      seen.eventId = envelope.id;
      seen.type = envelope.type;
      seen.source = envelope.source;
    }
    const data = envelope.data_base64 != null ? decodeBase64Data(envelope.data_base64) : envelope.data;
    let event: AnyWebhookEvent;
    try {
      event = normalizeEvent(envelope, data, raw as Record<string, unknown>);
    } catch (error) {
      // Only a field the schema names (not data that is no object at all) is this code's to learn.
      if (quarantine && error instanceof InvalidEventError && error.errors !== undefined)
        throw new UnreadableEvent(invalidEventProblem(error), envelope, raw as Record<string, unknown>);
      throw error;
    }
    if (event.layout === 'A' && event.dataschema !== null && event.schemaVersion === null) {
      log.info(
        { eventId: event.id, dataschema: event.dataschema },
        'dataschema is not of the form …/schemas/<resource>/v<x.y.z>.json; schemaVersion is null',
      );
    }
    const violations = checkEventRules(event.type, event.layout, event.data);
    if (violations.length > 0) {
      if (validation === 'strict') {
        const problem = ruleProblem(violations);
        throw quarantine ? new UnreadableEvent(problem, envelope, event.raw) : problem;
      }
      log.warn(
        { eventId: event.id, type: event.type, violations },
        'event breaks the spec; accepted because validation is lenient',
      );
    }
    // `text` is given only when it spells no key the parse dropped (see fromBytes).
    const kept = keepText && !binary && text !== undefined ? text : undefined;
    return { envelope, event, text: kept };
  }

  // Not an async function: a body already here (or another parser's) is read into an event at once;
  // only a body still arriving costs a promise, the read's own.
  return function readThen<S extends EnvelopeSeen | undefined, T>(
    request: WebhookRequest,
    seen: S,
    next: (read: ReadEvent, request: WebhookRequest, seen: S) => T | Promise<T>,
    failed: (error: unknown, request: WebhookRequest, seen: S) => T | Promise<T>,
  ): T | Promise<T> {
    let binary: boolean;
    let read: ReadEvent;
    try {
      // application/cloudevents+json always means structured mode, whatever ce- headers come along.
      const contentType = request.header('content-type');
      binary =
        request.header('ce-specversion') !== undefined &&
        !/^\s*application\/cloudevents/i.test(contentType ?? '');
      checkContent(contentType, request.header('content-encoding'), binary);
      const { parsed } = request.body;
      if (parsed !== undefined) read = event(request, seen, binary, fromOtherParser(parsed), undefined);
      else {
        // A body already here is read into an event at once; `readNow` throws as `read` would reject.
        const here = request.body.readNow?.(limit);
        if (here === undefined) {
          // Through Promise.resolve: a door's read that hands back another thenable still gives a promise.
          const bytesRead = binary;
          return Promise.resolve(request.body.read(limit, bodyTimeoutMs)).then(
            (bytes) => {
              let arrived: ReadEvent;
              try {
                arrived = fromBytes(request, seen, bytesRead, bytes);
              } catch (error) {
                return failed(error, request, seen);
              }
              return next(arrived, request, seen);
            },
            (error: unknown) => failed(error, request, seen),
          );
        }
        // Bounded here too: a door's accessor that ignored the limit still cannot hand the parser more.
        if (here.byteLength > limit) throw bodyProblems.tooLarge(limit);
        read = fromBytes(request, seen, binary, here);
      }
    } catch (error) {
      return failed(answerOf(error), request, seen);
    }
    return next(read, request, seen);
  };
}

/** An event that breaks the rules is answered 400, naming the field; every other error as it is. */
function answerOf(error: unknown): unknown {
  return error instanceof InvalidEventError ? invalidEventProblem(error) : error;
}
