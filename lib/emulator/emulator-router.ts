import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeBody } from '../adapters/incoming-message/node-body';
import { HttpProblem } from '../core/http-problem';
import { DEFAULT_BODY_TIMEOUT_MS } from '../default-body-timeout';
import { ApiProblem } from './api-problem';

/** A request as the emulator's routes see it: the path's parameters, the query, the body on demand. */
export interface EmulatorRequest {
  readonly raw: IncomingMessage;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly params: Readonly<Record<string, string>>;
  header(name: string): string | undefined;
  /**
   * The whole body as UTF-8 text, at most `limit` bytes (413 past it) arriving within the receiver's
   * body bound (408 past it). Read once.
   */
  text(limit: number): Promise<string>;
}

export type RouteHandler = (req: EmulatorRequest, res: ServerResponse) => unknown;

interface Route {
  method: string;
  pattern: RegExp;
  names: string[];
  handler: RouteHandler;
}

function compile(path: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = path
    .split('/')
    .map((part) => {
      if (!part.startsWith(':')) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(part.slice(1));
      return '([^/]+)';
    })
    .join('/');
  return { pattern: new RegExp(`^${source}$`), names };
}

/*
 * A body the emulator stops reading is not drained: each answer says `Connection: close`, and Node
 * ends the socket once it is sent (a 413 on a 50 MB upload costs nothing more).
 */
const CLOSE = { Connection: 'close' };

const tooLarge = (limit: number) =>
  new ApiProblem({
    status: 413,
    slug: 'body-too-large',
    title: 'Content Too Large',
    detail: `The body is over ${Math.round(limit / 1024)} KiB.`,
    headers: CLOSE,
  });

const tooSlow = () =>
  new ApiProblem({
    status: 408,
    slug: 'body-timeout',
    title: 'Request Timeout',
    detail: `The body did not arrive within ${DEFAULT_BODY_TIMEOUT_MS} ms.`,
    headers: CLOSE,
  });

const aborted = () =>
  new ApiProblem({
    status: 400,
    slug: 'body-aborted',
    title: 'Bad Request',
    detail: 'The client aborted the body.',
    headers: CLOSE,
  });

/** The node door's problem for a body it stopped reading, as the emulator answers it. */
function emulatorProblem(error: unknown, limit: number): unknown {
  if (!(error instanceof HttpProblem)) return error;
  if (error.status === 413) return tooLarge(limit);
  if (error.status === 408) return tooSlow();
  return aborted();
}

/**
 * Reads a body as text within `limit` bytes and the receiver's body bound, with the receiver's own
 * reader; past either, a problem (the rest is not read).
 */
async function readText(raw: IncomingMessage, limit: number): Promise<string> {
  try {
    const bytes = await nodeBody(raw).read(limit, DEFAULT_BODY_TIMEOUT_MS);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  } catch (error) {
    throw emulatorProblem(error, limit);
  }
}

/**
 * The few routes the emulator serves, on plain `node:http`: no framework to install for a tool that
 * answers a handful of paths. Paths match exactly, with `:name` segments.
 */
export class EmulatorRouter {
  readonly #routes: Route[] = [];

  get(path: string, handler: RouteHandler): this {
    return this.#add('GET', path, handler);
  }

  post(path: string, handler: RouteHandler): this {
    return this.#add('POST', path, handler);
  }

  delete(path: string, handler: RouteHandler): this {
    return this.#add('DELETE', path, handler);
  }

  /** The handler for this request, with its request view; undefined when no route matches. */
  match(raw: IncomingMessage, url: URL): { handler: RouteHandler; req: EmulatorRequest } | undefined {
    const method = raw.method === 'HEAD' ? 'GET' : (raw.method ?? 'GET');
    for (const route of this.#routes) {
      if (route.method !== method) continue;
      const found = route.pattern.exec(url.pathname);
      if (found === null) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        const value = found[i + 1] as string;
        try {
          params[name] = decodeURIComponent(value);
        } catch {
          params[name] = value;
        }
      });
      let body: Promise<string> | undefined;
      const req: EmulatorRequest = {
        raw,
        method,
        path: url.pathname,
        query: url.searchParams,
        params,
        header: (name) => {
          const value = raw.headers[name.toLowerCase()];
          return Array.isArray(value) ? value.join(', ') : value;
        },
        text: (limit) => (body ??= readText(raw, limit)),
      };
      return { handler: route.handler, req };
    }
    return undefined;
  }

  #add(method: string, path: string, handler: RouteHandler): this {
    this.#routes.push({ method, ...compile(path), handler });
    return this;
  }
}

/** Writes `body` as JSON with its length, as every emulator answer is. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendText(res, status, 'application/json', JSON.stringify(body), headers);
}

export function sendText(
  res: ServerResponse,
  status: number,
  type: string,
  text: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    ...headers,
    'Content-Type': `${type}; charset=utf-8`,
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** 204, nothing else. */
export function sendEmpty(res: ServerResponse): void {
  if (res.headersSent) return;
  res.writeHead(204).end();
}
