import type { ExpressMiddleware } from './express-types';
import { checkOptionKeys } from '../../check-option-keys';
import { createDispatcher } from '../../core/dispatch/dispatcher';
import { requestsInFlight } from '../../core/dispatch/requests-in-flight';
import { drain, type DrainResult } from '../../core/dispatch/drain';
import {
  DISPATCH_OPTION_KEYS,
  resolveDispatchOptions,
  type DispatchEventOptions,
} from '../../core/dispatch/dispatch-options';
import { checkMovedOptions } from '../../core/dispatch/idempotency-settings';
import { rateLimitedLog } from '../../rate-limited-log';
import { checkRouter } from '../../core/resolve-receiver-options';
import type { EventRouter } from '../../events/event-router';
import { resolveLogger } from '../../logger';
import { openTelemetryTracing } from '../../observability/open-telemetry-tracing';
import { sendAnswer } from './express-request';
import { getWebhookEvent } from './read-cloud-event';

export type { DispatchEventOptions };

/** A dispatch middleware that can also wait for the handlers still running. */
export type DispatchHandler = ExpressMiddleware & {
  /** Resolves once every handler started so far has settled (for graceful shutdown), or after `timeoutMs`. */
  drain(options?: { timeoutMs?: number }): Promise<Pick<DrainResult, 'drained' | 'running'>>;
};

/**
 * Step 4: runs the event's handlers and answers 200 only once they all succeeded (or the event is a
 * known duplicate of one that did); 500 when one fails, 503 past `timeoutMs` or when the store is
 * unavailable, 409 while the same event is still being processed by another delivery.
 */
export function dispatchEvent(router: EventRouter, options: DispatchEventOptions = {}): DispatchHandler {
  checkRouter(router, 'dispatchEvent');
  checkMovedOptions(options, 'dispatchEvent');
  checkOptionKeys(options, DISPATCH_OPTION_KEYS, 'dispatchEvent');
  const log = resolveLogger(options.logger, 'dispatchEvent');
  const dispatcher = createDispatcher(
    router,
    resolveDispatchOptions(options, 'dispatchEvent'),
    log,
    rateLimitedLog(log),
    openTelemetryTracing,
  );

  const handler = function dispatchEvent(req, res, next) {
    let event;
    try {
      event = getWebhookEvent(res);
    } catch (error) {
      return next(error);
    }
    const headers = req.headers;
    const header = (name: string) => {
      const value = headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    };
    void dispatcher.dispatch(event, header).then(({ answer }) => sendAnswer(res, answer));
  } as DispatchHandler;
  // This step sees requests only from dispatch on; the whole receiver's drain counts from entry.
  const noRequests = requestsInFlight();
  handler.drain = (options) => drain(noRequests, dispatcher, options);
  return handler;
}
