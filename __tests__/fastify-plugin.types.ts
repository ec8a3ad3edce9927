// Compile-only: `npm run typecheck` checks this file; jest never runs it. Each @ts-expect-error is a
// mistake the plugin's types must refuse at compile time: if it compiled, the directive itself is an
// error.
import Fastify from 'fastify';
import { createEventRouter, type DrainResult } from 'service-webhooks';
import { serviceWebhooks, type ServiceWebhooksOptions } from 'service-webhooks/fastify';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_proof: T): void => undefined;

const app = Fastify();
const router = createEventRouter().on('ag.access_pass.issued', (event) => {
  const type: 'ag.access_pass.issued' = event.type;
  void type;
});

void app.register(serviceWebhooks, { prefix: '/webhooks', bearerTokens: ['tok'], router });
// @ts-expect-error a misspelt option (bearerTokens)
void app.register(serviceWebhooks, { bearerToken: ['tok'], router });
// @ts-expect-error the router is required
void app.register(serviceWebhooks, { bearerTokens: ['tok'] });
// @ts-expect-error an option of the wrong type
void app.register(serviceWebhooks, { bearerTokens: ['tok'], router, drainTimeoutMs: '5s' });
// @ts-expect-error a misspelt event type in the router the plugin is given
void app.register(serviceWebhooks, { router: createEventRouter().on('ag.access_pass.isued', () => {}) });

// The plugin's options are the receiver's, plus where it mounts and how long close() waits.
expectType<Equal<ServiceWebhooksOptions['prefix'], string | undefined>>(true);
expectType<Equal<ServiceWebhooksOptions['drainTimeoutMs'], number | undefined>>(true);

// The decorator is typed on every Fastify instance once the subpath is imported.
const drained: Promise<DrainResult> = app.serviceWebhooks.drain({ timeoutMs: 1000 });
void drained;
// @ts-expect-error drain takes its bound as { timeoutMs }
void app.serviceWebhooks.drain(1000);
