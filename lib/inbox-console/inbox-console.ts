import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeBody } from '../adapters/incoming-message/node-body';
import { DEFAULT_BODY_TIMEOUT_MS } from '../default-body-timeout';
import type { JobRecord } from '../inbox/inbox';
import { consoleCore } from './console-core';
import { consoleProblem } from './console-problem';
import type { ConsoleAnswer, EventSink } from './console-request';
import type { InboxConsoleOptions } from './inbox-console-options';

/** The console as a node:http request handler, which Express also takes as middleware. */
export interface InboxConsoleHandler {
  (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void;
  /**
   * Counts a worker's tries for the overview's chart: pass it to `inbox.startWorker(router, { onJob })`
   * (call it from your own `onJob` to keep one). Tries of workers in other processes are not seen.
   */
  onJob(record: JobRecord): void;
  /** Ends the live streams of open pages (call it before closing the server). */
  close(): void;
}

/** A form body of at most `limit` bytes within the receiver's body bound, read as the node doors do. */
async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const bytes = await nodeBody(req).read(limit, DEFAULT_BODY_TIMEOUT_MS);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

function nodeSink(req: IncomingMessage, res: ServerResponse): EventSink {
  return {
    write: (text) => void res.write(text),
    buffered: () => res.writableLength,
    end: () => res.destroy(),
    onClose: (listener) => {
      res.once('close', listener);
      req.once('close', listener);
    },
  };
}

/** Writes a core answer on a node:http response. */
export function writeAnswer(req: IncomingMessage, res: ServerResponse, answer: ConsoleAnswer): void {
  if ('stream' in answer) {
    res.writeHead(answer.status, answer.headers);
    res.flushHeaders();
    answer.stream(nodeSink(req, res));
    return;
  }
  // A refused or unread upload: the rest of it is not waited for.
  const close = answer.status >= 400 && !req.complete ? { Connection: 'close' } : {};
  res.writeHead(answer.status, {
    ...answer.headers,
    ...close,
    'Content-Length': Buffer.byteLength(answer.body),
  });
  res.end(req.method === 'HEAD' ? undefined : answer.body);
}

/**
 * The operator's console for `options.inbox`: a node:http handler that is also Express middleware
 * (`app.use('/ops/webhooks', inboxConsole({ inbox, authorize }))`). Every request, page, stream,
 * asset or action, is first given to `authorize`. Serves the overview (`/`), the dead letters
 * (`/dead-letters`, `/dead-letters/<event id>`), the status as JSON (`/status`), the live stream
 * (`/stream`) and the POST-only actions (`/actions/replay`, `/actions/pause`, `/actions/resume`).
 * Throws at construction on a missing `authorize` or an unknown option.
 */
export function inboxConsole(options: InboxConsoleOptions<IncomingMessage>): InboxConsoleHandler {
  const core = consoleCore(options, 'inboxConsole');
  const handler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => {
    // Express strips its mount path from req.url and keeps it in req.baseUrl.
    const mounted = (req as { baseUrl?: unknown }).baseUrl;
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    let base: string;
    let path: string;
    if (typeof mounted === 'string') {
      base = mounted;
      path = url.pathname;
    } else {
      base = core.basePath;
      if (base !== '' && url.pathname !== base && !url.pathname.startsWith(`${base}/`)) {
        if (next) next();
        else
          writeAnswer(
            req,
            res,
            consoleProblem(404, 'console-not-found', 'Not Found', `The inbox console is mounted at ${base}.`),
          );
        return;
      }
      path = url.pathname.slice(base.length) || '/';
    }
    core
      .handle({
        method: req.method ?? 'GET',
        path,
        query: url.searchParams,
        base,
        header: (name) => {
          const value = req.headers[name];
          return Array.isArray(value) ? value.join(', ') : value;
        },
        remoteAddress: req.socket.remoteAddress,
        readBody: (limit) => readBody(req, limit),
        raw: req,
      })
      .then(
        (answer) => writeAnswer(req, res, answer),
        (error: unknown) => (next ? next(error) : res.destroy()),
      );
  };
  return Object.assign(handler, { onJob: core.onJob, close: core.close });
}
