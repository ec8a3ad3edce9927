import type { ExpressMiddleware, ExpressRequestLike, ExpressResponseLike } from './express-types';
import { createReceiverCore, type DrainResult, type Handled } from '../../core/receiver-core';
import type { ReceiverOptions } from '../../core/receiver-options';
import { openTelemetryTracing } from '../../observability/open-telemetry-tracing';
import { expressRequest, sendAnswer } from './express-request';

/** Options of {@link webhookReceiver}: the receiver's options, {@link ReceiverOptions}. */
export type WebhookReceiverOptions = ReceiverOptions;

/** The receiver as one Express middleware, with a way to wait for what is running. */
export type WebhookReceiver = ExpressMiddleware & {
  /**
   * Resolves once every request that entered the receiver has been answered and every handler has
   * settled, or after `timeoutMs`; call it on shutdown, after `server.close()`.
   */
  drain(options?: { timeoutMs?: number }): Promise<DrainResult>;
};

/**
 * Whether the request is for the mount point itself. Express has already cut the mount path off
 * `req.url` ('/' or '/?…' is left), so that answers the common case; `req.path` is a getter that
 * parses the URL again on every call, read only for the rest (an absolute-form URL, say).
 */
function atMountPoint(req: ExpressRequestLike): boolean {
  const url = req.url;
  if (url === '/' || url?.startsWith('/?') === true) return true;
  return req.path === '/';
}

/**
 * The whole pipeline as one Express (4 or 5) middleware: POST only, handshake, bearer auth, bounded
 * CloudEvent read and dispatch, every failure answered as problem+json. Mount it with
 * `app.use(path, …)`: it answers that path itself, and passes sub-paths on to `next()`.
 */
export function webhookReceiver(options: WebhookReceiverOptions): WebhookReceiver {
  const core = createReceiverCore(options, 'webhookReceiver', openTelemetryTracing);
  const receiver = function webhookReceiver(req, res, next) {
    // Mounted with app.use(path, …), it answers that path only; as a route handler
    // (app.post(path, …)), Express already matched the path.
    if (req.route === undefined && !atMountPoint(req)) return next();
    // Every failure, ours included, is already a problem+json answer. Sent in the core's own turn: at
    // once for a delivery answered at once, else in the turn its answer settles; no promise, no turn
    // and no closure over the response of this door's own.
    void core.handleWith(expressRequest(req), res, send);
  } as WebhookReceiver;
  function send({ answer, record }: Handled, res: ExpressResponseLike): void {
    sendAnswer(res, answer);
    core.report(record);
  }
  receiver.drain = core.drain;
  return receiver;
}
