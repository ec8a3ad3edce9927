import type { ExpressMiddleware, ExpressResponseLike } from './express-types';
import { checkOptionKeys } from '../../check-option-keys';
import type { CloudEventEnvelope } from '../../core/event/cloud-event-envelope';
import { parseLimit } from '../../core/event/parse-limit';
import { createEventReader, type ValidationMode } from '../../core/event/read-event';
import { checkBodyTimeout, checkValidation } from '../../core/resolve-receiver-options';
import type { AnyWebhookEvent } from '../../events/webhook-event';
import { resolveLogger, type Logger } from '../../logger';
import { expressRequest } from './express-request';

export type { ValidationMode };

/** Options of {@link readCloudEvent}. */
export interface ReadCloudEventOptions {
  /** Largest body accepted, in bytes or as `'512kb'`, `'1mb'` (units b, kb, mb, gb). Defaults to `'1mb'`. */
  limit?: number | string;
  /**
   * `'strict'` answers 400 to an event that breaks the per-type rules of spec section 6 (rules 2–5);
   * `'lenient'` accepts it and logs the violation as a warning. Defaults to `'strict'`.
   */
  validation?: ValidationMode;
  /** How long the body may take to arrive before a 408. Defaults to `10_000` ms. */
  bodyTimeoutMs?: number;
  /** Where warnings go: any subset of `{ debug, info, warn, error }`, or `false`. Defaults to the console. */
  logger?: Logger | false;
}

/** The locals this step leaves for the next; read them with {@link getWebhookEvent}. */
export interface WebhookLocals {
  /** The normalized event, typed per type: what handlers get. */
  webhookEvent: AnyWebhookEvent;
  /** The CloudEvent envelope as validated, before normalization. */
  cloudEvent: CloudEventEnvelope;
}

/** The normalized event left by `readCloudEvent`, for apps that compose their own pipeline. */
export function getWebhookEvent(res: ExpressResponseLike): AnyWebhookEvent {
  const event = (res.locals as Partial<WebhookLocals>).webhookEvent;
  if (event === undefined) {
    throw new Error(
      '[service-webhooks] getWebhookEvent: no event on res.locals; mount readCloudEvent() before this handler',
    );
  }
  return event;
}

/**
 * Step 3: reads the body (bounded in size and time), checks it is one CloudEvents 1.0 event, detects
 * its layout, normalizes it and leaves it on `res.locals.webhookEvent`.
 */
export function readCloudEvent(options: ReadCloudEventOptions = {}): ExpressMiddleware {
  checkOptionKeys(options, ['limit', 'validation', 'bodyTimeoutMs', 'logger'], 'readCloudEvent');
  const read = createEventReader({
    limit: parseLimit(options.limit, 'readCloudEvent'),
    validation: checkValidation(options.validation, 'readCloudEvent'),
    bodyTimeoutMs: checkBodyTimeout(options.bodyTimeoutMs, 'readCloudEvent'),
    log: resolveLogger(options.logger, 'readCloudEvent'),
  });
  return function readCloudEvent(req, res, next) {
    Promise.resolve()
      .then(() => read(expressRequest(req)))
      .then(({ envelope, event }) => {
        const locals = res.locals as unknown as WebhookLocals;
        locals.cloudEvent = envelope;
        locals.webhookEvent = event;
        next();
      }, next);
  };
}
