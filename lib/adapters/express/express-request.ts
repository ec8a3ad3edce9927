import type { ExpressRequestLike } from './express-types';
import type { WebhookRequest } from '../../core/webhook-request';
import { nodeRequest } from '../node/node-request';

/** An Express request as the core sees it: a body parser in front leaves its value, not the bytes. */
export function expressRequest(req: ExpressRequestLike): WebhookRequest {
  const parsedBySomeoneElse = (req as { _body?: unknown })._body === true || req.readableEnded;
  return nodeRequest(req, parsedBySomeoneElse ? { value: req.body as unknown } : undefined);
}
