import type { EventPattern, EventType, TypesMatching } from '../../events/catalogue';
import type { EventHandler, OnOptions } from '../../events/event-router';
import { checkOnOptions } from '../../events/on-options';
import type { WebhookEvent } from '../../events/webhook-event';

/** The event a handler of `K` (a type, a family pattern, or several) receives, as `router.on(K, …)` types it. */
export type ServiceEvent<K extends EventType | EventPattern> = WebhookEvent<TypesMatching<K>>;

/** One `@OnServiceEvent(target, options)` on a method, as the module reads it at bootstrap. */
export interface ServiceEventRegistration {
  target: string | readonly string[];
  options: OnOptions | undefined;
}

// Keyed by the method itself, so a subclass that inherits it, and two instances of one class, find it.
const registrations = new WeakMap<object, ServiceEventRegistration[]>();

/**
 * Makes a provider's method a handler of `target`, as `router.on(target, method, options)` would:
 * `ServiceWebhooksModule` finds it at bootstrap (Nest's `DiscoveryService`) on every singleton
 * provider and calls it with the provider as `this`. The method's `event` parameter must accept
 * {@link ServiceEvent}`<typeof target>`, so a misspelt type or a parameter of another type fails to
 * compile. Nest's legacy decorators (`experimentalDecorators`) are assumed, as Nest itself needs them.
 *
 * `options` are `router.on`'s, checked when the class is defined. `name` keys the handler's recorded
 * success for each event (a retried event runs only the handlers not yet done) and names it in logs,
 * metrics and `ctx.handler`; it defaults to `ClassName.methodName` (the provider's class, as
 * `PassService.onIssued`), not the method's own name, so two providers' `handle` methods are two
 * handlers. Give `name` when the class name may change between deploys (a rename, a minifying build)
 * or one class is provided twice.
 */
export function OnServiceEvent<const K extends EventType | EventPattern>(
  target: K | readonly K[],
  options?: OnOptions,
) {
  return function onServiceEvent<M extends EventHandler<ServiceEvent<K>>>(
    prototype: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): void {
    const method = descriptor.value;
    if (typeof prototype === 'function' || typeof method !== 'function') {
      throw new TypeError(
        `[service-webhooks] @OnServiceEvent: ${String(key)} is not an instance method; decorate a method of an @Injectable() provider (static methods and accessors are not discovered)`,
      );
    }
    try {
      checkOnOptions(options);
    } catch (error) {
      const where = `${(prototype.constructor as { name?: string } | undefined)?.name ?? '(class)'}.${String(key)}`;
      throw new TypeError(
        `[service-webhooks] @OnServiceEvent on ${where}: ${(error as Error).message.replace('[service-webhooks] ', '')}`,
        { cause: error },
      );
    }
    const list = registrations.get(method) ?? [];
    list.push({ target, options });
    registrations.set(method, list);
  };
}

/** The `@OnServiceEvent` registrations on `method`, none when it is not decorated. */
export function serviceEventRegistrations(method: unknown): readonly ServiceEventRegistration[] {
  return (typeof method === 'function' && registrations.get(method)) || [];
}
