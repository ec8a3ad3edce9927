import type { IncomingMessage, ServerResponse } from 'node:http';
import { OptionsError } from '../../options-error';
import { WHERE } from './service-webhooks-module-options';

/** A node request listener with Connect's `next`, as `createNodeHandler` makes one. */
export type NodeListener = (req: IncomingMessage, res: ServerResponse, next?: () => unknown) => Promise<void>;

/** What the mounting uses of Nest's `HttpAdapterHost.httpAdapter`, on either platform. */
export interface NestHttpAdapterLike {
  getType(): string;
  getInstance(): unknown;
}

interface ExpressAppLike {
  use(middleware: (req: IncomingMessage, res: ServerResponse, next: () => void) => void): unknown;
}

interface FastifyRequestLike {
  raw: IncomingMessage;
}
interface FastifyReplyLike {
  raw: ServerResponse;
  hijack(): void;
}
interface FastifyLike {
  register(plugin: (scope: FastifyLike) => Promise<void>): unknown;
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    type: string,
    parser: (request: unknown, payload: unknown, done: (error: null, body?: undefined) => void) => void,
  ): void;
  all(path: string, handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<void>): void;
}

/**
 * Puts the receiver in front of Nest's body parsing for its path. Called when the adapter is set
 * (`HttpAdapterHost.init$`), which is before `app.init()` registers Nest's parsers and routes.
 * Express: an app-level middleware, first in the stack, answering only `path` (the listener's own
 * match) and passing every other request on. Fastify: a route in its own encapsulated scope whose
 * only content-type parser reads nothing, so the receiver reads the raw stream after authenticating;
 * the reply is hijacked, so Fastify's hooks and serializers do not touch the answer.
 */
export function mountReceiver(adapter: NestHttpAdapterLike, path: string, listener: NodeListener): void {
  const type = adapter.getType();
  if (type === 'express') {
    const app = adapter.getInstance() as ExpressAppLike;
    app.use((req, res, next) => void listener(req, res, next));
    return;
  }
  if (type === 'fastify') {
    const fastify = adapter.getInstance() as FastifyLike;
    fastify.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
      scope.all(path, (request, reply) => {
        reply.hijack();
        return listener(request.raw, reply.raw);
      });
    });
    return;
  }
  throw new OptionsError(
    'ERR_SW_OPTION',
    WHERE,
    `the receiver mounts on Nest's Express or Fastify platform; this app's HTTP adapter is "${type}". Use createFetchHandler or createNodeHandler with it instead`,
  );
}
