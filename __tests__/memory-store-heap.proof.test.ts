import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MemoryStore } from '../lib/idempotency/memory-store';

const HOUR = 60 * 60 * 1000;

// A proof, not a unit test (npm run test:proofs): 400 000 entries and a dozen full collections take
// seconds of CPU even on a quiet machine, so it runs once per CI run rather than in every npm test.
describe('MemoryStore memory', () => {
  const ENTRIES = 100_000;
  /** Bytes of heap per entry of three stores filled one after another, each after a full collection. */
  const measures: number[] = [];
  const stores: MemoryStore[] = [];

  // The filling and the collections take seconds on a busy machine: their own bound, not the test's.
  beforeAll(async () => {
    // The bench measures this exactly; here a generous bound, after a full collection each side.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const fill = (prefix: string) => {
      const store = new MemoryStore({ logger: false, maxEntries: ENTRIES });
      stores.push(store);
      for (let i = 0; i < ENTRIES; i++) {
        const key = `\u0001src.example\u0001${prefix}_${i.toString().padStart(12, '0')}_${'x'.repeat(40)}`;
        const token = `tok${i.toString(36).padStart(20, '0')}`;
        void store.claim(key, token, HOUR);
        void store.markDone(key, token, HOUR);
      }
    };
    // Full collections with turns between them, so weak references and finalizers from earlier test
    // files settle too; a first store absorbs what is left, the second is the measure.
    const settle = async () => {
      for (let i = 0; i < 4; i++) {
        gc();
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    fill('a');
    await settle();
    // Three stores measured one after another; the median is the figure, so one collection of
    // unrelated garbage in the middle of a measure cannot decide the test.
    for (const prefix of ['b', 'c', 'd']) {
      const before = process.memoryUsage().heapUsed;
      fill(prefix);
      await settle();
      measures.push((process.memoryUsage().heapUsed - before) / ENTRIES);
    }
  }, 180_000);
  afterAll(() => stores.forEach((s) => s.close()));

  it('holds 100 000 entries (keys of 80 characters) in under 500 bytes each', () => {
    expect(stores.map((s) => s.size)).toEqual([ENTRIES, ENTRIES, ENTRIES, ENTRIES]);
    const perEntry = [...measures].sort((a, b) => a - b)[1] as number;
    expect(perEntry).toBeGreaterThan(50);
    expect(perEntry).toBeLessThan(500);
  });
});
