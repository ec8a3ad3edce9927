import { MemoryStore } from '../lib/idempotency/memory-store';
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
});
