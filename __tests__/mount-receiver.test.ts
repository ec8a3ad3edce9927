import { mountReceiver } from '../lib/adapters/nestjs/mount-receiver';

describe('mountReceiver', () => {
  it.each(['koa', 'hono', ''])(
    'refuses a Nest HTTP adapter of type %j, saying which platforms it mounts on',
    (type) => {
      let used = false;
      const adapter = { getType: () => type, getInstance: () => ((used = true), {}) };
      expect(() => mountReceiver(adapter, '/webhooks', async () => undefined)).toThrow(
        `[service-webhooks] ServiceWebhooksModule: the receiver mounts on Nest's Express or Fastify platform; this app's HTTP adapter is "${type}"`,
      );
      expect(used).toBe(false);
    },
  );
});
