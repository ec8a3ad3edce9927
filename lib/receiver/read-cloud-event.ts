import type { RequestHandler, Response } from 'express';
import { parse as parseContentType } from 'content-type';
import { checkEventRules } from '../events/event-rules';
import { normalizeEvent } from '../events/normalize-event';
import type { AnyWebhookEvent } from '../events/webhook-event';
import { resolveLogger, type Logger } from '../logger';
import { OptionsError } from '../options-error';
import { parseCloudEventEnvelope, type CloudEventEnvelope } from './cloud-event-envelope';
import { HttpProblem } from './http-problem';
import { parseLimit } from './parse-limit';
import { readJsonBody } from './read-json-body';

export type ValidationMode = 'strict' | 'lenient';

export interface ReadCloudEventOptions {
  /** Largest body accepted, in bytes or as a string such as `'512kb'`. Defaults to `'1mb'`. */
  limit?: number | string;
  /**
   * `'strict'` answers 400 to an event that breaks the per-type rules of spec section 6 (rules 2–5);
   * `'lenient'` accepts it and logs the violation as a warning. Defaults to `'strict'`.
   */
  validation?: ValidationMode;
  /** Where warnings go: any subset of `{ debug, info, warn, error }`, or `false`. Defaults to the console. */
  logger?: Logger | false;
}

/** The locals this step leaves for the next; read them with {@link getWebhookEvent}. */
export interface WebhookLocals {
  webhookEvent: AnyWebhookEvent;
  cloudEvent: CloudEventEnvelope;
}

const ACCEPTED_TYPES = new Set(['application/cloudevents+json', 'application/json']);
const UTF8 = new Set(['utf-8', 'utf8']);

function unsupported(detail: string): HttpProblem {
  return new HttpProblem({
    status: 415,
    slug: 'unsupported-media-type',
    title: 'Unsupported Media Type',
    detail: `${detail} Send application/cloudevents+json or application/json, in UTF-8.`,
    field: 'Content-Type',
    headers: { 'Accept-Post': 'application/cloudevents+json, application/json' },
    closeConnection: true,
  });
}

function checkContentType(header: string | undefined): void {
  if (header === undefined) throw unsupported('The request has no Content-Type.');
  let parsed: ReturnType<typeof parseContentType>;
  try {
    parsed = parseContentType(header);
  } catch {
    throw unsupported('The Content-Type header cannot be parsed.');
  }
  if (!ACCEPTED_TYPES.has(parsed.type)) throw unsupported(`Content-Type ${parsed.type} is not accepted.`);
  const charset = parsed.parameters.charset?.toLowerCase();
  if (charset !== undefined && !UTF8.has(charset)) throw unsupported(`Charset ${charset} is not accepted.`);
}

/** The normalized event left by `readCloudEvent`, for apps that compose their own pipeline. */
export function getWebhookEvent(res: Response): AnyWebhookEvent {
  const event = (res.locals as Partial<WebhookLocals>).webhookEvent;
  if (event === undefined) {
    throw new Error(
      '[service-webhooks] getWebhookEvent: no event on res.locals; mount readCloudEvent() before this handler',
    );
  }
  return event;
}

/**
 * Step 3: reads the body (bounded), checks it is one CloudEvents 1.0 event, detects its layout,
 * normalizes it and leaves it on `res.locals.webhookEvent`.
 */
export function readCloudEvent(options: ReadCloudEventOptions = {}): RequestHandler {
  const limit = parseLimit(options.limit, 'readCloudEvent');
  const validation = options.validation ?? 'strict';
  if (validation !== 'strict' && validation !== 'lenient') {
    throw new OptionsError(
      'ERR_SW_VALIDATION',
      'readCloudEvent',
      `validation must be 'strict' or 'lenient' (got ${String(validation)})`,
    );
  }
  const log = resolveLogger(options.logger, 'readCloudEvent');

  async function read(req: Parameters<RequestHandler>[0], res: Response): Promise<void> {
    checkContentType(req.headers['content-type']);
    const body = await readJsonBody(req, limit);
    const envelope = parseCloudEventEnvelope(body);
    const event = normalizeEvent(envelope, body as Record<string, unknown>);
    if (event.layout === 'A' && event.dataschema !== null && event.schemaVersion === null) {
      log.info(
        { eventId: event.id, dataschema: event.dataschema },
        'dataschema is not of the form …/schemas/<resource>/v<x.y.z>.json; schemaVersion is null',
      );
    }
    const violations = checkEventRules(event.type, event.layout, event.data);
    if (violations.length > 0) {
      if (validation === 'strict') {
        const [first] = violations as [(typeof violations)[number]];
        throw new HttpProblem({
          status: 400,
          slug: 'event-rule-violated',
          title: 'Bad Request',
          detail: `${first.message} (spec ${first.rule}).`,
          field: first.field,
          errors: violations.map((v) => ({ field: v.field, rule: `${v.message} (spec ${v.rule})` })),
        });
      }
      log.warn(
        { eventId: event.id, type: event.type, violations },
        'event breaks the spec; accepted because validation is lenient',
      );
    }
    const locals = res.locals as WebhookLocals;
    locals.cloudEvent = envelope;
    locals.webhookEvent = event;
  }

  return function readCloudEvent(req, res, next) {
    read(req, res).then(() => next(), next);
  };
}
