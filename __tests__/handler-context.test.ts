import { createEventRouter, createFetchHandler } from '../lib';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';

/** A handler written as Express's (req, res), as a JavaScript user might: it must not be acknowledged. */
describe('a handler that tries to write the answer', () => {
  it.each(['status', 'send', 'json', 'sendStatus', 'end'])(
    'calling ctx.%s() fails the delivery (500, not acknowledged) with a message that says what to do',
    async (method) => {
      const logged: string[] = [];
      const router = createEventRouter().on('ag.hid_org.created', (_req, res) => {
        (res as unknown as Record<string, (code?: number) => unknown>)[method]?.(200);
      });
      const handler = createFetchHandler({
        bearerTokens: ['tok'],
        router,
        logger: { error: (meta: { err?: Error }) => void logged.push(String(meta.err?.message)) },
      });
      const response = await handler(
        new Request('http://app.local/', {
          method: 'POST',
          headers: { ...DELIVERY_HEADERS, authorization: 'Bearer tok' },
          body: JSON.stringify(buildEvent('ag.hid_org.created')),
        }),
      );
      expect(response.status).toBe(500);
      expect(logged.join('\n')).toMatch(
        new RegExp(
          `ctx\\.${method}\\(\\) does not exist: handlers do not write the answer.*return to acknowledge.*RetryLater`,
        ),
      );
      expect(logged.join('\n')).not.toMatch(/is not a function/);
    },
  );

  it('keeps ctx.header, which is real', async () => {
    let seen: string | undefined;
    const router = createEventRouter().on('ag.hid_org.created', (_event, ctx) => {
      seen = ctx.header('user-agent');
    });
    const handler = createFetchHandler({ bearerTokens: ['tok'], router, logger: false });
    const response = await handler(
      new Request('http://app.local/', {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, authorization: 'Bearer tok' },
        body: JSON.stringify(buildEvent('ag.hid_org.created')),
      }),
    );
    expect(response.status).toBe(200);
    expect(seen).toBe(DELIVERY_HEADERS['User-Agent']);
  });
});
