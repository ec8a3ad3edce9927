import type { DiscoveryService, HttpAdapterHost, MetadataScanner } from '@nestjs/core' with {
  'resolution-mode': 'import',
};
import { writeAnswer } from '../incoming-message/node-request';
import { createNodeHandler, type NodeHandler } from '../node/create-node-handler';
import { HttpProblem } from '../../core/http-problem';
import { problemAnswer } from '../../core/problems';
import type { DrainResult } from '../../core/receiver-core';
import type { EventHandler } from '../../events/event-router';
import type { AnyWebhookEvent } from '../../events/webhook-event';
import type { InboxWorker } from '../../inbox/inbox';
import { mountReceiver, type NestHttpAdapterLike } from './mount-receiver';
import { serviceEventRegistrations } from './on-service-event';
import { WHERE, type ResolvedModuleOptions } from './service-webhooks-module-options';

// Only before init: Nest listens after every onModuleInit has run.
const NOT_READY = problemAnswer(
  new HttpProblem({
    status: 503,
    slug: 'not-ready',
    title: 'Service Unavailable',
    detail: 'The receiver is not started yet: the Nest app has not finished its init. Retry later.',
    headers: { 'retry-after': '30' },
  }),
);

/**
 * The receiver inside a Nest app: `ServiceWebhooksModule` provides it; inject it to drain deliveries
 * yourself. It mounts itself when Nest's HTTP adapter is set, adds every `@OnServiceEvent` method of
 * the app's singleton providers to the router at `onModuleInit`, starts the inbox's worker with the
 * app, waits for deliveries in flight before the server closes, and closes the worker and the inbox on
 * `onApplicationShutdown`.
 */
export class ServiceWebhooks {
  readonly #options: ResolvedModuleOptions;
  readonly #discovery: DiscoveryService;
  readonly #scanner: MetadataScanner;
  #handler: NodeHandler | undefined;
  #worker: InboxWorker | undefined;
  #mountError: unknown;

  /** @internal `ServiceWebhooksModule` makes it; inject it, do not construct it. */
  constructor(
    options: ResolvedModuleOptions,
    adapterHost: HttpAdapterHost,
    discovery: DiscoveryService,
    scanner: MetadataScanner,
  ) {
    this.#options = options;
    this.#discovery = discovery;
    this.#scanner = scanner;
    // Emitted once Nest's HTTP adapter exists, before app.init() registers its body parsers; never in
    // a standalone application context (a worker-only process), which then only runs the inbox.
    adapterHost.init$.subscribe(() => {
      try {
        mountReceiver(adapterHost.httpAdapter as NestHttpAdapterLike, options.path, (req, res, next) => {
          if (this.#handler !== undefined) return this.#handler(req, res, next);
          writeAnswer(res, NOT_READY);
          return Promise.resolve();
        });
      } catch (error) {
        // Thrown inside rxjs it would be an uncaught exception later; Nest's init reports it instead.
        this.#mountError = error;
      }
    });
  }

  /** @internal Nest calls it: discovers the handlers, builds the receiver, starts the inbox's worker. */
  async onModuleInit(): Promise<void> {
    if (this.#mountError !== undefined) throw this.#mountError;
    const { receiver, path, worker } = this.#options;
    for (const wrapper of this.#discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (typeof instance !== 'object' || instance === null) continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      for (const name of this.#scanner.getAllMethodNames(prototype)) {
        const method = (instance as Record<string, unknown>)[name];
        const found = serviceEventRegistrations(method);
        if (found.length === 0) continue;
        const where = `${instance.constructor.name}.${name}`;
        if (!wrapper.isDependencyTreeStatic()) {
          throw new TypeError(
            `[service-webhooks] ${WHERE}: @OnServiceEvent on ${where}, a request-scoped or transient provider; handlers run outside any request, so make it a singleton (the default scope)`,
          );
        }
        const handler = (method as EventHandler<AnyWebhookEvent>).bind(instance);
        // Without its own { name }, a handler is named by its function's name: Class.method here, so
        // two providers' methods of one name are two handlers, each with its own recorded success.
        Object.defineProperty(handler, 'name', { value: where });
        for (const { target, options } of found) {
          try {
            receiver.router.on(target as never, handler, options);
          } catch (error) {
            throw new TypeError(
              `[service-webhooks] ${WHERE}: @OnServiceEvent on ${where}: ${(error as Error).message.replace('[service-webhooks] ', '')}`,
              { cause: error },
            );
          }
        }
      }
    }
    this.#handler = createNodeHandler({ ...receiver, path });
    if (receiver.inbox !== undefined && worker !== false) {
      this.#worker = await receiver.inbox.startWorker(receiver.router, worker);
    }
  }

  /** Resolves once every delivery that entered has been answered and its handlers settled, or after `timeoutMs`. */
  drain(options?: { timeoutMs?: number }): Promise<DrainResult> {
    return this.#handler?.drain(options) ?? Promise.resolve({ drained: true, requests: 0, running: [] });
  }

  /** @internal Nest calls it before the server closes: deliveries in flight are answered first. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.drain({ timeoutMs: this.#options.shutdownTimeoutMs });
  }

  /** @internal Nest calls it last: the worker stops taking jobs and finishes its running ones. */
  async onApplicationShutdown(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.close();
    await this.#options.receiver.inbox?.close();
  }
}
