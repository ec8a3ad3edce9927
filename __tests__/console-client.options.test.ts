import { ConsoleClient } from '../lib/console';
import { OptionsError } from '../lib/options-error';
import { consoleClientFor } from './support/console-server';

const good = { baseUrl: 'https://service.example', accountId: 'acct_1', secretKey: 'sk_1' };

describe('ConsoleClient refuses unknown option names at construction', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ['timeout', { timeout: 500 }, /unknown option "timeout"; did you mean "timeoutMs"\?/],
    ['baseURL', { baseURL: 'https://x.test' }, /unknown option "baseURL"; did you mean "baseUrl"\?/],
    ['accountID', { accountID: 'a' }, /unknown option "accountID"; did you mean "accountId"\?/],
    ['secret', { secret: 's' }, /unknown option "secret"; did you mean "secretKey"\?/],
    ['fetchFn', { fetchFn: fetch }, /unknown option "fetchFn"; did you mean "fetch"\?/],
    [
      'retries',
      { retries: 3 },
      /unknown option "retries".*Known options: baseUrl, accountId, secretKey, fetch, timeoutMs/,
    ],
  ])('%s', (_name, extra, message) => {
    const build = () => new ConsoleClient({ ...good, ...extra } as never);
    expect(build).toThrow(OptionsError);
    expect(build).toThrow(message);
    expect(build).toThrow(/^\[service-webhooks\] ConsoleClient: /);
  });

  it('takes every known option', () => {
    expect(() => new ConsoleClient({ ...good, fetch, timeoutMs: 100 })).not.toThrow();
  });
});

describe('ConsoleClient methods refuse unknown option names before sending', () => {
  const sent: string[] = [];
  const client = new ConsoleClient({
    ...good,
    fetch: async (input) => {
      sent.push(String(input));
      return new Response('[]', { status: 200 });
    },
  });
  afterEach(() => expect(sent).toEqual([]));

  it.each<[string, (c: ConsoleClient) => Promise<unknown>, RegExp]>([
    [
      'listWebhooks',
      (c) => c.listWebhooks({ per_page: 10 } as never),
      /listWebhooks: unknown option "per_page"; did you mean "perPage"\?/,
    ],
    [
      'iterateWebhooks',
      async (c) => {
        for await (const _ of c.iterateWebhooks({ pageSize: 10 } as never)) void _;
      },
      /iterateWebhooks: unknown option "pageSize"/,
    ],
    [
      'waitUntilVerified',
      (c) => c.waitUntilVerified('wh_1', { timeout: 5 } as never),
      /did you mean "timeoutMs"\?/,
    ],
    [
      'createWebhook',
      (c) =>
        c.createWebhook({
          name: 'n',
          url: 'https://x.test/h',
          subscribedEvent: ['ag.hid_org.created'],
        } as never),
      /createWebhook: unknown option "subscribedEvent"; did you mean "subscribedEvents"\?/,
    ],
  ])('%s', async (_name, call, message) => {
    const error = await call(client).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as Error).message).toMatch(message);
  });
});

describe('ConsoleClient takes only a loopback http:// or an https:// baseUrl', () => {
  it.each(['http://example.com', 'http://10.0.0.7:8080', 'http://console.internal/api', 'ftp://example.com'])(
    'refuses baseUrl %s at construction',
    (baseUrl) => {
      expect(() => consoleClientFor(baseUrl)).toThrow(OptionsError);
      expect(() => consoleClientFor(baseUrl)).toThrow(/baseUrl must/);
    },
  );

  it.each([
    'http://localhost:4010',
    'http://127.0.0.1:1',
    'http://127.8.9.10',
    'http://[::1]:4010',
    'https://x.test',
  ])('takes baseUrl %s', (baseUrl) => {
    expect(() => consoleClientFor(baseUrl)).not.toThrow();
  });
});
