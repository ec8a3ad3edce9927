import { ConsoleApiError, type ConsoleClient } from '../lib/console';
import { answerJson, consoleClientFor, consoleServer } from './support/console-server';

describe('ConsoleClient never follows a redirect', () => {
  const calls: [string, (c: ConsoleClient) => Promise<unknown>][] = [
    ['listWebhooks', (c) => c.listWebhooks()],
    ['deleteWebhook', (c) => c.deleteWebhook('wh_1')],
    ['verifyWebhook', (c) => c.verifyWebhook('wh_1')],
    [
      'createWebhook',
      (c) =>
        c.createWebhook({ name: 'n', url: 'https://x.test/h', subscribedEvents: ['ag.hid_org.created'] }),
    ],
  ];
  const cases = [301, 302, 303, 307, 308].flatMap((status) =>
    calls.map(([name, call]) => [status, name, call] as const),
  );
  it.each(cases)(
    'a %d answer to %s is an error, and the signed headers go nowhere else',
    async (status, _n, call) => {
      const elsewhere = await consoleServer((_req, res) => answerJson(res, 200, []));
      const redirecting = await consoleServer((_req, res) => {
        res.writeHead(status, { Location: `${elsewhere.url}/v1/console/webhooks` });
        res.end();
      });
      try {
        const error = (await call(consoleClientFor(redirecting.url)).catch(
          (e: unknown) => e,
        )) as ConsoleApiError;
        expect(error).toBeInstanceOf(ConsoleApiError);
        expect(error.status).toBe(status);
        expect(error.message).toMatch(/redirects are not followed/);
        expect(redirecting.seen).toHaveLength(1);
        expect(elsewhere.seen).toEqual([]);
      } finally {
        await Promise.all([elsewhere.close(), redirecting.close()]);
      }
    },
  );
});
