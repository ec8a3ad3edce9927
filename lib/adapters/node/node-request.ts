import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeBody } from '../../core/node-body';
import type { Answer, WebhookRequest } from '../../core/webhook-request';

/** A node:http request as the core sees it; `parsed` when another parser already read the body. */
export function nodeRequest(req: IncomingMessage, parsed?: { value: unknown }): WebhookRequest {
  const { headers } = req;
  return {
    method: req.method ?? 'GET',
    header: (name) => {
      const value = headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    body: nodeBody(req, parsed),
    socket: req.socket,
  };
}

/** Writes the core's answer; a response someone else already started is left alone. */
export function writeAnswer(res: ServerResponse, answer: Answer): void {
  if (res.headersSent || res.writableEnded) return;
  try {
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  } catch {
    // A socket gone or a response someone else half-wrote: nothing can be sent, and nothing may
    // throw into the app's server (the Service sees no answer and retries).
    res.destroy();
  }
}
