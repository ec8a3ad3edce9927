import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ACK_HEADERS, JSON_TYPE } from '../../core/problems';
import { createReceiverCore, type DrainResult, type Handled } from '../../core/receiver-core';
import type { ReceiverOptions } from '../../core/receiver-options';
import { openTelemetryTracing } from '../../observability/open-telemetry-tracing';
import { OptionsError } from '../../options-error';
import { nodeRequest } from '../incoming-message/node-request';

const WHERE = 'serviceWebhooks';

/** The Fastify plugin's options: the receiver's, and where to mount it. */
export interface ServiceWebhooksOptions extends ReceiverOptions {
  /**
   * The path of the receiver's one route, under the prefix of the instance it is registered on. The
   * route answers every method (the receiver says 405 to all but POST). Defaults to `'/webhooks'`.
   */
  prefix?: string;
  /**
   * How long Fastify's `close()` waits for requests still in the receiver and handlers still running
   * before it goes on closing. It must be below the app's `pluginTimeout`, which bounds close hooks
   * too. Defaults to `5_000` ms, or half the app's `pluginTimeout` when that is shorter.
   */
  drainTimeoutMs?: number;
}

/** What the plugin decorates the instance with, as `app.serviceWebhooks`. */
export interface ServiceWebhooksDecorator {
  /**
   * Resolves once every request that entered the receiver has been answered and every handler settled,
   * or after `timeoutMs`. `app.close()` calls it itself, in its `preClose` hook (bounded by
   * `drainTimeoutMs`).
   */
  drain(options?: { timeoutMs?: number }): Promise<DrainResult>;
}

declare module 'fastify' {
  interface FastifyInstance {
    serviceWebhooks: ServiceWebhooksDecorator;
  }
}

const DEFAULT_DRAIN_TIMEOUT_MS = 5_000;
const METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];

function checkFastifyOptions(
  options: ServiceWebhooksOptions,
  pluginTimeout: number,
): { url: string; drainTimeoutMs: number } {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      'options must be an object with at least router and bearerTokens',
    );
  }
  const url = options.prefix ?? '/webhooks';
  if (typeof url !== 'string' || !url.startsWith('/')) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      `prefix must be a string starting with "/" (got ${JSON.stringify(url)})`,
    );
  }
  // Fastify fails close() with a hook timeout once pluginTimeout has passed (0 is no bound).
  const bounded = pluginTimeout > 0;
  const drainTimeoutMs =
    options.drainTimeoutMs ??
    (bounded ? Math.min(DEFAULT_DRAIN_TIMEOUT_MS, pluginTimeout / 2) : DEFAULT_DRAIN_TIMEOUT_MS);
  if (typeof drainTimeoutMs !== 'number' || !Number.isFinite(drainTimeoutMs) || drainTimeoutMs < 0) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      `drainTimeoutMs must be a finite number of milliseconds, 0 or more (got ${String(drainTimeoutMs)})`,
    );
  }
  if (bounded && drainTimeoutMs >= pluginTimeout) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      `drainTimeoutMs (${drainTimeoutMs}) must be below the app's pluginTimeout (${pluginTimeout}), which bounds app.close()'s hooks: lower drainTimeoutMs or raise pluginTimeout in Fastify({ pluginTimeout })`,
    );
  }
  return { url, drainTimeoutMs };
}

async function register(fastify: FastifyInstance, options: ServiceWebhooksOptions): Promise<void> {
  const { url, drainTimeoutMs } = checkFastifyOptions(options, fastify.initialConfig.pluginTimeout ?? 0);
  // The app's logger unless told otherwise: the receiver's warnings land where the app's own lines do.
  const logger = 'logger' in options ? options.logger : fastify.log;
  const core = createReceiverCore({ ...options, logger }, WHERE, openTelemetryTracing, [
    'prefix',
    'drainTimeoutMs',
  ]);
  if (fastify.hasDecorator('serviceWebhooks')) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      'this Fastify instance already has a receiver (app.serviceWebhooks); register one serviceWebhooks per app, with one router for every event type',
    );
  }
  const decorator: ServiceWebhooksDecorator = { drain: (drainOptions) => core.drain(drainOptions) };
  fastify.decorate('serviceWebhooks', decorator);
  // preClose, not onClose: Fastify runs onClose only once its server has closed, and a server.close()
  // waits for every open connection, so a delivery answered meanwhile on a keep-alive connection would
  // hold close() for the keep-alive timeout (72 s). In preClose new requests already get 503, and the
  // connections drained here are idle, so the server.close() after it ends them at once.
  fastify.addHook('preClose', async () => {
    await core.drain({ timeoutMs: drainTimeoutMs });
  });

  // The receiver answers in the route's onRequest hook, after the app's own onRequest hooks: Fastify
  // never reaches its content-type parsers (which would read the body before the token is checked, or
  // refuse a media type with an answer of its own), and the receiver reads the raw stream with its own
  // limit and timeout. The reply goes through reply.send, so onSend, onResponse and the request log
  // see it as any other route's.
  function answer(request: FastifyRequest, reply: FastifyReply): void {
    try {
      // Sent in the core's own turn: at once for a delivery answered at once, else in the turn its
      // answer settles; no promise, no turn and no closure over the reply of this hook's own.
      void core.handleWith(nodeRequest(request.raw), reply, send);
    } catch (error) {
      // The pipeline answers its every failure itself; whatever else throws gets Fastify's 500.
      failed(reply, error);
    }
  }

  function send({ answer: handled, record }: Handled, reply: FastifyReply): void {
    try {
      // An acknowledgement's one header is set by name: reply.headers() walks its object (Object.keys,
      // then a lower-casing header() per key), ~145 ns a reply in a loop where type() costs ~20.
      if (handled.headers === ACK_HEADERS) void reply.code(handled.status).type(JSON_TYPE).send(handled.body);
      else void reply.code(handled.status).headers(handled.headers).send(handled.body);
    } catch (error) {
      // A header an app's hook set that node refuses to write: no answer went out.
      failed(reply, error);
    }
    core.report(record);
  }

  /**
   * Fastify's error answer; when even that throws (its error path writes the same refused header),
   * the connection is destroyed so the request never hangs: the Service sees no 2xx and retries.
   */
  function failed(reply: FastifyReply, error: unknown): void {
    try {
      void reply.send(error);
    } catch {
      reply.raw.destroy();
    }
  }
  fastify.route({
    method: METHODS,
    url,
    // The callback form, whose done() is never called: Fastify's hook runner stops here, holding no
    // promise and resolving no thenable reply, and never goes on to parse the body of a request
    // answered (Fastify's documented early answer from a hook; an async hook returning the reply
    // cost two more promise jobs and a reply.then a request). The pipeline begins a microtask later:
    // by then node's parser has pushed a body that came with the head, which the core takes at once
    // (`readNow`), with no read promise.
    onRequest: (request, reply, _done) => queueMicrotask(() => answer(request, reply)),
    // Never reached: onRequest always answers. Kept as the route's handler for a request that reached
    // it some other way, answered the same.
    handler: answer,
  });
}

/**
 * The receiver as a Fastify plugin: `app.register(serviceWebhooks, { prefix: '/webhooks', bearerTokens,
 * router })`. One route, whose body Fastify never parses; `app.serviceWebhooks.drain()`, called by
 * `app.close()`. Not encapsulated (as `fastify-plugin` makes a plugin), so the decorator is the app's.
 */
export const serviceWebhooks: FastifyPluginAsync<ServiceWebhooksOptions> = Object.assign(register, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'service-webhooks',
  [Symbol.for('plugin-meta')]: { name: 'service-webhooks', fastify: '4.x || 5.x' },
});
