import { checkOptionKeys } from '../../check-option-keys';
import type { ReceiverOptions } from '../../core/receiver-options';
import { RECEIVER_OPTION_KEYS } from '../../core/receiver-options';
import { resolveReceiverOptions } from '../../core/resolve-receiver-options';
import { createEventRouter, type EventRouter } from '../../events/event-router';
import type { InboxWorkerOptions } from '../../inbox/inbox';
import { OptionsError } from '../../options-error';

/** The options of `ServiceWebhooksModule.forRoot()`: the receiver's, and where and how it runs in Nest. */
export interface ServiceWebhooksModuleOptions extends Omit<ReceiverOptions, 'router'> {
  /**
   * The path the receiver answers, mounted on Nest's Express or Fastify platform before Nest's body
   * parser (the body is read by the receiver, after authentication, within `limit`). Nest's global
   * prefix does not apply: give the whole path. Defaults to `'/webhooks'`.
   */
  path?: string;
  /**
   * A router holding handlers registered outside Nest; the `@OnServiceEvent` methods are added to
   * it at bootstrap. Defaults to a new router holding only those methods.
   */
  router?: EventRouter;
  /**
   * With `inbox`: the options of the worker started with the app (`inbox.startWorker(router,
   * worker)`), or `false` to start none in this process (workers run elsewhere). The worker and the
   * inbox are closed on `onApplicationShutdown`. Defaults to `{}`: one worker with the defaults of
   * {@link InboxWorkerOptions}.
   */
  worker?: InboxWorkerOptions | false;
  /**
   * How long `app.close()` waits for deliveries still in the receiver before the server closes. The
   * Service retries any it cuts short. Defaults to `10_000` ms.
   */
  shutdownTimeoutMs?: number;
}

export const WHERE = 'ServiceWebhooksModule';
const OWN_KEYS = ['path', 'worker', 'shutdownTimeoutMs'] as const;
const MODULE_OPTION_KEYS: readonly string[] = [...RECEIVER_OPTION_KEYS, 'router', ...OWN_KEYS];

/** The module's options, checked once (the receiver's with its own rules), with their defaults. */
export interface ResolvedModuleOptions {
  receiver: ReceiverOptions & { router: EventRouter };
  path: string;
  worker: InboxWorkerOptions | false;
  shutdownTimeoutMs: number;
}

/** Checks the options where they are given (forRoot, or the forRootAsync factory's result), so a misconfigured app fails at boot. */
export function resolveModuleOptions(options: ServiceWebhooksModuleOptions): ResolvedModuleOptions {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      `options are required: ${WHERE}.forRoot({ bearerTokens })`,
    );
  }
  checkOptionKeys(options, MODULE_OPTION_KEYS, WHERE);
  const { path = '/webhooks', worker = {}, shutdownTimeoutMs = 10_000, router, ...receiver } = options;
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      `path must be a string starting with "/" (got ${JSON.stringify(path)})`,
    );
  }
  if (worker !== false && (typeof worker !== 'object' || worker === null)) {
    throw new OptionsError('ERR_SW_OPTION', WHERE, 'worker must be the worker options object, or false');
  }
  if (
    typeof shutdownTimeoutMs !== 'number' ||
    !(shutdownTimeoutMs > 0) ||
    !Number.isFinite(shutdownTimeoutMs)
  ) {
    throw new OptionsError(
      'ERR_SW_TIMEOUT',
      WHERE,
      `shutdownTimeoutMs must be a positive number of milliseconds (got ${String(shutdownTimeoutMs)})`,
    );
  }
  const resolved = { ...receiver, router: router ?? createEventRouter() };
  // Every receiver option now, not at the first delivery; the receiver is built once the decorated
  // handlers are known, since what the store must offer depends on them. A default store is not
  // made twice: it would sweep, unused, for the life of the process.
  resolveReceiverOptions({ ...resolved, idempotency: resolved.idempotency ?? false }, WHERE);
  return { receiver: resolved, path, worker, shutdownTimeoutMs };
}
