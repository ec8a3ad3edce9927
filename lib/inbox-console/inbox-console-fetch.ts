import { DEFAULT_BODY_TIMEOUT_MS } from '../default-body-timeout';
import type { JobRecord } from '../inbox/inbox';
import { readBoundedText } from '../read-bounded-text';
import { consoleCore } from './console-core';
import { consoleProblem } from './console-problem';
import type { EventSink } from './console-request';
import type { InboxConsoleOptions } from './inbox-console-options';

/** What a Fetch door knows of the connection that a `Request` does not carry. */
export interface ConsoleConnection {
  /** The peer's address as the socket saw it; needed by `authorize: 'loopback-only'`. */
  remoteAddress?: string;
}

/** The console as a Fetch handler (Hono, Bun, Deno, a Worker). */
export interface InboxConsoleFetchHandler {
  (request: Request, connection?: ConsoleConnection): Promise<Response>;
  /** Counts a worker's tries for the chart: pass it to `inbox.startWorker(router, { onJob })`. */
  onJob(record: JobRecord): void;
  /** Ends the live streams of open pages. */
  close(): void;
}

/** A ReadableStream the feed writes to; its queue, in bytes, is what the client has not taken. */
function fetchStream(start: (sink: EventSink) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const listeners: (() => void)[] = [];
  let closed = false;
  const closeAll = () => {
    if (closed) return;
    closed = true;
    for (const listener of listeners) listener();
  };
  const HIGH = 1 << 30;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        start({
          write: (text) => {
            if (!closed) controller.enqueue(encoder.encode(text));
          },
          buffered: () => HIGH - (controller.desiredSize ?? HIGH),
          end: () => {
            if (closed) return;
            controller.close();
            closeAll();
          },
          onClose: (listener) => void listeners.push(listener),
        });
      },
      cancel: closeAll,
    },
    { highWaterMark: HIGH, size: (chunk) => chunk.byteLength },
  );
}

/**
 * The operator's console for Fetch-API apps: `(request, { remoteAddress }?) => Response`. Give it
 * `basePath` when it is mounted under a path. Otherwise as `inboxConsole()`.
 */
export function inboxConsoleFetch(options: InboxConsoleOptions<Request>): InboxConsoleFetchHandler {
  const core = consoleCore(options, 'inboxConsoleFetch');
  const handler = async (request: Request, connection?: ConsoleConnection): Promise<Response> => {
    const url = new URL(request.url);
    const base = core.basePath;
    let answer;
    if (base !== '' && url.pathname !== base && !url.pathname.startsWith(`${base}/`))
      answer = consoleProblem(
        404,
        'console-not-found',
        'Not Found',
        `The inbox console is mounted at ${base}.`,
      );
    else
      answer = await core.handle({
        method: request.method,
        path: url.pathname.slice(base.length) || '/',
        query: url.searchParams,
        base,
        header: (name) => request.headers.get(name) ?? undefined,
        remoteAddress: connection?.remoteAddress,
        readBody: (limit) => readBoundedText(request, limit, DEFAULT_BODY_TIMEOUT_MS),
        raw: request,
      });
    if ('stream' in answer)
      return new Response(fetchStream(answer.stream), { status: 200, headers: answer.headers });
    return new Response(request.method === 'HEAD' || answer.status === 304 ? null : answer.body, {
      status: answer.status,
      headers: answer.headers,
    });
  };
  return Object.assign(handler, { onJob: core.onJob, close: core.close });
}
