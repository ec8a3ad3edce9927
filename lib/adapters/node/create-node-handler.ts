import type { IncomingMessage, ServerResponse } from 'node:http';
import { problemAnswer } from '../../core/problems';
import { HttpProblem } from '../../core/http-problem';
import { createReceiverCore, type DrainResult, type Handled } from '../../core/receiver-core';
import type { ReceiverOptions } from '../../core/receiver-options';
import { openTelemetryTracing } from '../../observability/open-telemetry-tracing';
import { OptionsError } from '../../options-error';
import { nodeRequest, writeAnswer } from '../incoming-message/node-request';

export interface NodeHandlerOptions extends ReceiverOptions {
  /**
   * The path the receiver answers (query string ignored); a request for any other path goes to
   * `next` when given, else gets 404. Defaults to answering every path.
   */
  path?: string;
}

/** A `node:http` request listener (or Connect/Koa-style middleware) for the receiver. */
export type NodeHandler = ((
  req: IncomingMessage,
  res: ServerResponse,
  next?: () => unknown,
) => Promise<void>) & {
  /** Resolves once every request that entered has been answered and every handler settled, or after `timeoutMs`. */
  drain(options?: { timeoutMs?: number }): Promise<DrainResult>;
};

const NOT_FOUND = problemAnswer(
  new HttpProblem({
    status: 404,
    slug: 'not-found',
    title: 'Not Found',
    detail: 'No webhook receiver at this path.',
    closeConnection: true,
  }),
);

function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** A request for another path: `next`'s, else 404. */
async function elsewhere(res: ServerResponse, next: (() => unknown) | undefined): Promise<void> {
  if (next !== undefined) {
    await next();
    return;
  }
  writeAnswer(res, NOT_FOUND);
}

/**
 * The receiver for a plain `node:http` server, or any framework that exposes node's request and
 * response (Fastify's `request.raw`/`reply.raw`, Koa's `ctx.req`/`ctx.res`).
 */
export function createNodeHandler(options: NodeHandlerOptions): NodeHandler {
  const path = options?.path;
  if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/'))) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      'createNodeHandler',
      `path must be a string starting with "/" (got ${JSON.stringify(path)})`,
    );
  }
  const core = createReceiverCore(options, 'createNodeHandler', openTelemetryTracing, ['path']);

  /**
   * The pipeline begins a microtask after node's 'request' event: by then node's parser has pushed a
   * body that came in the packets of its head (most deliveries), which the core takes at once
   * (`readNow`), so such a delivery is answered with no read promise and no promise turn of its own.
   * The answer is written in the core's own continuation (`handleWith`), in the turn it is known:
   * this door adds no promise turn of its own to one that waited either.
   */
  function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    return new Promise((resolve, reject) => {
      queueMicrotask(() => {
        try {
          core.handleWith(nodeRequest(req), res, (handled) => {
            try {
              written(res, handled);
              resolve();
            } catch (error) {
              reject(error);
            }
          });
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  function written(res: ServerResponse, { answer: handled, record }: Handled): void {
    writeAnswer(res, handled);
    core.report(record);
  }

  const handler = function nodeHandler(req: IncomingMessage, res: ServerResponse, next?: () => unknown) {
    if (path !== undefined && pathOf(req.url) !== path) return elsewhere(res, next);
    return answer(req, res);
  } as NodeHandler;
  handler.drain = core.drain;
  return handler;
}
