import { ConsoleClient } from '../lib/console';
import { OptionsError } from '../lib/options-error';

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
