import { ConsoleClient, ConsoleValidationError } from '../lib/console';
import { CONSOLE_SECRET } from './support/console-server';

describe('ids that are not one path segment are refused before sending', () => {
  const sent: string[] = [];
  const client = new ConsoleClient({
    baseUrl: 'https://service.example',
    accountId: 'a',
    secretKey: CONSOLE_SECRET,
    fetch: async (input) => {
      sent.push(String(input));
      return new Response('[]', { status: 200 });
    },
  });
  afterEach(() => expect(sent).toEqual([]));

  const ids = ['', '.', '..', 'a/b', '../x', 'a\\b', '%2e%2e', 'a?b', 'a#b', 'a b', 'a\nb', 'x'.repeat(257)];
  const methods = ['deleteWebhook', 'verifyWebhook', 'waitUntilVerified'] as const;
  it.each(methods.flatMap((method) => ids.map((id) => [method, id] as const)))(
    '%s refuses %j',
    async (method, id) => {
      const error = (await client[method](id).catch((e: unknown) => e)) as ConsoleValidationError;
      expect(error).toBeInstanceOf(ConsoleValidationError);
      expect(error.field).toBe('id');
      expect(error.message).toMatch(/^\[service-webhooks\] ConsoleClient\.\w+: id must/);
    },
  );
});
