import { MemoryStore } from '../lib/idempotency/memory-store';
import { OptionsError } from '../lib/options-error';
import { runStoreContract } from 'service-webhooks/testing';

runStoreContract('MemoryStore', () => new MemoryStore({ logger: false }), {
  close: (store) => (store as MemoryStore).close(),
});

describe('runStoreContract', () => {
  it('says where to call it when the test globals are missing', () => {
    const g = globalThis as { describe?: unknown };
    const saved = g.describe;
    g.describe = undefined;
    try {
      expect(() => runStoreContract('x', () => new MemoryStore())).toThrow(
        /runStoreContract: call it at the top of a jest test file/,
      );
    } finally {
      g.describe = saved;
    }
  });

  it.each([
    [
      'a misspelt option',
      ['S', () => new MemoryStore(), { shortMS: 100 }],
      /unknown option "shortMS"; did you mean "shortMs"\?/,
    ],
    ['no name', ['', () => new MemoryStore()], /name must be a non-empty string/],
    ['a store instead of a factory', ['S', new MemoryStore()], /makeStore must be a function/],
    ['shortMs 0', ['S', () => new MemoryStore(), { shortMs: 0 }], /shortMs must be a positive whole number/],
    [
      'one claimant',
      ['S', () => new MemoryStore(), { claimants: 1 }],
      /claimants must be a whole number of at least 2/,
    ],
    ['close not a function', ['S', () => new MemoryStore(), { close: true }], /close must be a function/],
  ])('refuses %s before registering anything', (_name, args, message) => {
    const call = () => (runStoreContract as (...a: unknown[]) => void)(...args);
    expect(call).toThrow(OptionsError);
    expect(call).toThrow(message);
  });
});
