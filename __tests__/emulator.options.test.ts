import { createEmulator } from '../lib/emulator';
import { OptionsError } from '../lib/options-error';

describe('createEmulator refuses bad options at construction', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'attemptTimeout',
      { attemptTimeout: 500 },
      /unknown option "attemptTimeout"; did you mean "attemptTimeoutMs"\?/,
    ],
    ['retryWindow', { retryWindow: 1000 }, /unknown option "retryWindow"; did you mean "retryWindowMs"\?/],
    ['maxConcurrency', { maxConcurrency: 2 }, /unknown option "maxConcurrency"/],
    ['bindAddress', { bindAddress: '0.0.0.0' }, /unknown option "bindAddress".*Known options: port/],
    [
      'an account with a typo',
      { account: { accountId: 'a', secretKey: 's', secret: 'x' } },
      /unknown option "secret"/,
    ],
    [
      'an account without a secret',
      { account: { accountId: 'a' } },
      /account must be \{ accountId, secretKey \}/,
    ],
    ['port 70000', { port: 70000 }, /port must be 0 to 65535/],
    ['a random that is not a function', { random: 0.5 }, /random must be a function/],
    ['a logger that is not an object', { logger: 'debug' }, /logger must be an object/],
  ])('%s', async (_name, options, message) => {
    const error = await createEmulator(options as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toMatch(/^\[service-webhooks\] createEmulator/);
  });
});
