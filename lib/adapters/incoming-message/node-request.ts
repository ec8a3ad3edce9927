import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeBody } from './node-body';
import type { Answer, WebhookRequest } from '../../core/webhook-request';

/**
 * A header that must appear once. Two comparisons, not a Set: the names asked for are the code's own
 * literals, so a comparison is of two interned strings, where the Set looked each name up by its hash.
 */
const singleton = (name: string) => name === 'authorization' || name === 'content-type';

function allOf(raw: readonly string[], name: string, first: string): string {
  let all: string | undefined;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i] as string;
    // `name` is lower case: a key sent in lower case (as most clients send them) needs no copy to compare.
    if (key !== name && (key.length !== name.length || key.toLowerCase() !== name)) continue;
    all = seen++ === 0 ? (raw[i + 1] as string) : `${all}, ${raw[i + 1] as string}`;
  }
  return seen > 1 && all !== undefined ? all : first;
}

/**
 * A header that must appear once (Authorization, Content-Type): node keeps only the first of a
 * repeated one, the Fetch API joins them. Joined here too, so an ambiguous request is refused the
 * same way through every door and every step.
 */
export function joinedHeader(
  req: Pick<IncomingMessage, 'headers' | 'rawHeaders'>,
  name: string,
): string | undefined {
  const value = req.headers[name];
  if (Array.isArray(value)) return value.join(', ');
  return value === undefined ? undefined : allOf(req.rawHeaders, name, value);
}

/** A node:http request as the core sees it; `parsed` when another parser already read the body. */
export function nodeRequest(req: IncomingMessage, parsed?: { value: unknown }): WebhookRequest {
  const { headers } = req;
  return {
    method: req.method ?? 'GET',
    header: (name) => {
      const value = headers[name];
      if (Array.isArray(value)) return value.join(', ');
      return singleton(name) && value !== undefined ? allOf(req.rawHeaders, name, value) : value;
    },
    hasHeaderPrefix: (prefix) => Object.keys(headers).some((name) => name.startsWith(prefix)),
    body: nodeBody(req, parsed),
    socket: req.socket,
  };
}

/**
 * The answer's header lines, flat (`[name, value, …]`), its length last: node stores a flat array
 * without the own-property check per key its object form makes, and the length keeps the answer one
 * write (a response begun by writeHead without it is chunked: three more pieces, one writev).
 */
function headerLines(answer: Answer): string[] {
  const lines: string[] = [];
  const { headers } = answer;
  for (const name in headers) lines.push(name, headers[name] as string);
  lines.push('Content-Length', String(Buffer.byteLength(answer.body)));
  return lines;
}

/** Writes the core's answer; a response someone else already started is left alone. */
export function writeAnswer(res: ServerResponse, answer: Answer): void {
  if (res.headersSent || res.writableEnded) return;
  try {
    res.writeHead(answer.status, headerLines(answer));
    res.end(answer.body);
  } catch {
    // A socket gone or a response someone else half-wrote: nothing can be sent, and nothing may
    // throw into the app's server (the Service sees no answer and retries).
    res.destroy();
  }
}
