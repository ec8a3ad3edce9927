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

describe('emulator methods refuse unknown option names', () => {
  it.each<[string, (e: Awaited<ReturnType<typeof createEmulator>>) => unknown, RegExp]>([
    [
      'registerWebhook',
      (e) =>
        e.registerWebhook({
          name: 'x',
          url: 'http://127.0.0.1:9/',
          subscribedEvents: ['ag.hid_org.created'],
          token: 't',
        } as never),
      /registerWebhook: unknown option "token"/,
    ],
    [
      'emit',
      (e) => e.emit('ag.hid_org.created', {}, { layot: 'B' } as never),
      /emit: unknown option "layot"; did you mean "layout"\?/,
    ],
    [
      'waitForDeliveries',
      (e) => e.waitForDeliveries({ event: 'x' } as never),
      /waitForDeliveries: unknown option "event"/,
    ],
    [
      'waitForIdle',
      (e) => e.waitForIdle({ timeout: 5 } as never),
      /unknown option "timeout"; did you mean "timeoutMs"\?/,
    ],
  ])('%s', async (_name, call, message) => {
    const emulator = await createEmulator({ logger: false });
    try {
      const error = await (async () => call(emulator))().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OptionsError);
      expect((error as Error).message).toMatch(message);
      expect(emulator.listWebhooks()).toEqual([]);
      expect(emulator.events).toEqual([]);
    } finally {
      await emulator.close();
    }
  });
});

describe('createEmulator refuses a bad maxConcurrentDeliveries', () => {
  it.each([0, -1, 1.5, Number.NaN])('refuses maxConcurrentDeliveries %p at construction', async (value) => {
    await expect(createEmulator({ maxConcurrentDeliveries: value })).rejects.toThrow(
      /maxConcurrentDeliveries must be a whole number of at least 1/,
    );
  });
});
