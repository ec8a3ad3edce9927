import type { ServerResponse } from 'node:http';
import type { ExpressRequestLike } from './express-types';
import type { Answer, WebhookRequest } from '../../core/webhook-request';
import { joinedHeader, nodeRequest, writeAnswer } from '../incoming-message/node-request';

/*
 * The one seam between the Express door and node:http: an Express request is a node request, read as
 * the node door reads one (`adapters/incoming-message/`, shared by both, neither door's own), so the
 * other Express files see only the core's `WebhookRequest` and `Answer`, through the three functions here.
 */

/** An Express request as the core sees it: a body parser in front leaves its value, not the bytes. */
export function expressRequest(req: ExpressRequestLike): WebhookRequest {
  const parsedBySomeoneElse = (req as { _body?: unknown })._body === true || req.readableEnded;
  return nodeRequest(req, parsedBySomeoneElse ? { value: req.body as unknown } : undefined);
}

/** The Authorization header, a repeated one joined (as the core's `WebhookRequest.header` does), without building a request. */
export function authorizationOf(req: ExpressRequestLike): string | undefined {
  return joinedHeader(req, 'authorization');
}

/** Writes the core's answer; a response someone else already started is left alone. */
export const sendAnswer: (res: ServerResponse, answer: Answer) => void = writeAnswer;
