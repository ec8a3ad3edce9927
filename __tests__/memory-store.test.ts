import { KeyQueue } from '../lib/idempotency/key-queue';
import { MemoryStore } from '../lib/idempotency/memory-store';
import { OptionsError } from '../lib/options-error';
import { captureLogger } from './support/capture-logger';

const HOUR = 60 * 60 * 1000;

describe('MemoryStore', () => {
  let stores: MemoryStore[] = [];
  const make = (options: ConstructorParameters<typeof MemoryStore>[0] = {}) => {
    const store = new MemoryStore({ logger: false, ...options });
    stores.push(store);
    return store;
  };
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-11-22T00:00:00Z') }));
  afterEach(() => {
    stores.forEach((s) => s.close());
    stores = [];
    jest.useRealTimers();
  });

  it("hands out a new claim's list of succeeded handlers frozen: a caller's push cannot reach another store's claim", async () => {
    const store = make();
    const other = make();
    const first = await store.claimHandlers('a', 't', 1000);
    expect(() => (first.succeeded as string[]).push('leaked')).toThrow(TypeError);
    expect((await other.claimHandlers('b', 't', 1000)).succeeded).toEqual([]);
  });

  it('claims a free key once; a second claim is busy; done is done', async () => {
    const store = make();
    expect(await store.claim('k', 't1', 1000)).toBe('claimed');
    expect(await store.claim('k', 't2', 1000)).toBe('busy');
    expect(await store.get('k')).toBe('processing');
    await store.markDone('k', 't1', HOUR);
    expect(await store.claim('k', 't3', 1000)).toBe('done');
    expect(await store.get('k')).toBe('done');
  });

  it('frees a key whose lease ran out, so a crashed delivery cannot block it', async () => {
    const store = make();
    await store.claim('k', 't1', 1000);
    jest.advanceTimersByTime(999);
    expect(await store.claim('k', 't2', 1000)).toBe('busy');
    jest.advanceTimersByTime(1);
    expect(await store.claim('k', 't2', 1000)).toBe('claimed');
  });

  it('releases only for the token that holds the claim', async () => {
    const store = make();
    await store.claim('k', 't1', 1000);
    await store.release('k', 'someone-else');
    expect(await store.get('k')).toBe('processing');
    await store.release('k', 't1');
    expect(await store.get('k')).toBeNull();
  });

  it('never releases a done key', async () => {
    const store = make();
    await store.claim('k', 't1', 1000);
    await store.markDone('k', 't1', HOUR);
    await store.release('k', 't1');
    expect(await store.get('k')).toBe('done');
  });

  it('keeps a done key for its retention, then forgets it', async () => {
    const store = make();
    await store.claim('k', 't1', 1000);
    await store.markDone('k', 't1', 7 * HOUR);
    jest.advanceTimersByTime(7 * HOUR - 1);
    expect(await store.get('k')).toBe('done');
    jest.advanceTimersByTime(1);
    expect(await store.get('k')).toBeNull();
  });

  it('sweeps expired keys while idle', async () => {
    const store = make({ sweepIntervalMs: 1000 });
    for (let i = 0; i < 50; i++) await store.markDone(`k${i}`, 't', 500);
    expect(store.size).toBe(50);
    jest.advanceTimersByTime(1000);
    expect(store.size).toBe(0);
  });

  it('evicts the oldest key past maxEntries and warns that a duplicate could slip through', async () => {
    const logger = captureLogger();
    const store = make({ maxEntries: 3, logger });
    for (const key of ['a', 'b', 'c', 'd']) await store.markDone(key, 't', HOUR);
    expect(store.size).toBe(3);
    expect(await store.get('a')).toBeNull();
    expect(await store.get('d')).toBe('done');
    expect(logger.messages('warn')).toEqual([
      '[service-webhooks] MemoryStore is full: evicted 1 key before their time ran out (the last a done key), so a duplicate of those events could run its handlers again; raise maxEntries or use a shared store',
    ]);
    expect(logger.records[0]?.meta).toEqual({ evicted: 1, lastKey: 'a', lastState: 'done', maxEntries: 3 });
  });

  it('evicts the oldest write first, whether claimed or done', async () => {
    const store = make({ maxEntries: 2 });
    await store.claim('a', 't', HOUR);
    await store.claim('b', 't', HOUR);
    await store.markDone('a', 't', HOUR);
    await store.claim('c', 't', HOUR);
    expect([await store.get('a'), await store.get('b'), await store.get('c')]).toEqual([
      null,
      'processing',
      'processing',
    ]);
  });

  // Evicting a key whose lease is held would let another try of its event run beside that run; a key
  // kept for its records but held by no run is evicted as the oldest, as any key is.
  it.each<[string, Step, 'kept' | 'evicted']>([
    ['claimed', (store) => store.claim('a', 't', HOUR), 'kept'],
    [
      'taken over after a failed run',
      async (store) => {
        await store.claimHandlers('a', 't1', HOUR);
        await store.release('a', 't1', HOUR);
        await store.claimHandlers('a', 't2', HOUR);
      },
      'kept',
    ],
    [
      'one handler done, the rest running',
      async (store) => {
        await store.claimHandlers('a', 't', HOUR);
        await store.markHandlerDone('a', 't', 'crm', HOUR);
      },
      'kept',
    ],
    [
      'released with a retention (a failed run, counted)',
      async (store) => {
        await store.claimHandlers('a', 't', HOUR);
        await store.release('a', 't', HOUR);
      },
      'evicted',
    ],
    [
      'one handler done, its lease ran out',
      async (store) => {
        await store.claimHandlers('a', 't', 10);
        await store.markHandlerDone('a', 't', 'crm', HOUR);
        jest.advanceTimersByTime(10);
      },
      'evicted',
    ],
  ])('full, the oldest key %s is %s: only a held lease is passed over', async (_name, run, fate) => {
    const logger = captureLogger();
    const store = make({ maxEntries: 2, logger });
    await run(store);
    await store.markDone('b', 't', HOUR);
    await store.markDone('c', 't', HOUR);
    const states = [await store.get('a'), await store.get('b'), await store.get('c')];
    if (fate === 'kept') {
      expect(states).toEqual(['processing', null, 'done']);
      // Another try of the event meanwhile is busy, not run beside the first.
      expect(await store.claim('a', 't3', HOUR)).toBe('busy');
    } else expect(states).toEqual([null, 'done', 'done']);
    expect(logger.records.map((r) => r.meta.lastKey)).toEqual([fate === 'kept' ? 'b' : 'a']);
  });

  it('never evicts an entity whose lease is held: its next event meanwhile is busy, not run beside', async () => {
    const logger = captureLogger();
    const store = make({ maxEntries: 2, logger });
    const at = (eventId: string) => ({ time: '1'.repeat(22), eventId });
    expect(await store.leaseEntity('held', 't1', HOUR, at('a'))).toBe('leased');
    await store.advanceEntity('b', 't', at('a'), HOUR);
    await store.advanceEntity('c', 't', at('a'), HOUR);
    expect(await store.leaseEntity('held', 't2', HOUR, at('b'))).toBe('busy');
    // The oldest not held went instead: b's mark is gone (its old event leases again), c's is kept.
    expect(logger.records.map((r) => r.meta.lastKey)).toEqual(['b']);
    expect(await store.leaseEntity('c', 't4', HOUR, at('a'))).toBe('stale');
    expect(await store.leaseEntity('b', 't3', HOUR, at('a'))).toBe('leased');
  });

  it('holds more than maxEntries only by the runs in flight, until they end', async () => {
    const logger = captureLogger();
    const store = make({ maxEntries: 1, logger });
    await store.claim('a', 't', HOUR);
    await store.claim('b', 't', HOUR);
    expect(store.size).toBe(2);
    await store.markDone('a', 't', HOUR);
    await store.markDone('b', 't', HOUR);
    await store.markDone('c', 't', HOUR);
    expect([await store.get('a'), await store.get('b'), await store.get('c'), store.size]).toEqual([
      null,
      null,
      'done',
      1,
    ]);
    // A lease that ran out is no run: it goes, unreported, as an expired key does.
    jest.advanceTimersByTime(60_000);
    const reported = logger.records.length;
    await store.claim('d', 't', 10);
    jest.advanceTimersByTime(10);
    await store.markDone('e', 't', HOUR);
    expect([await store.get('d'), await store.get('e'), store.size]).toEqual([null, 'done', 1]);
    // The next report counts c's eviction alone: d's went unreported.
    jest.advanceTimersByTime(60_000);
    expect(logger.records.slice(reported).map((r) => [r.meta.evicted, r.meta.lastKey])).toEqual([[1, 'c']]);
  });

  it('passes over at most a few held keys a call: a flood of runs beyond the bound costs O(1) a key', async () => {
    const store = make({ maxEntries: 2 });
    for (let i = 0; i < 1000; i++) await store.claim(`run${i}`, 't', HOUR);
    const shift = jest.spyOn(KeyQueue.prototype, 'shift');
    for (let i = 0; i < 100; i++) await store.claim(`more${i}`, 't', HOUR);
    expect(shift.mock.calls.length).toBeLessThanOrEqual(100 * 8);
    shift.mockRestore();
    // Every run is still held, and none was evicted.
    expect([
      store.size,
      await store.claim('run0', 't2', HOUR),
      await store.claim('run999', 't2', HOUR),
    ]).toEqual([1100, 'busy', 'busy']);
  });

  // A key that left by another way than eviction and came back is as new as its return: the slot it
  // left behind must not evict it in place of the older keys.
  type Step = (store: MemoryStore) => Promise<unknown>;
  it.each<[string, Step, Step, Step]>([
    [
      'released, then claimed again',
      (store) => store.claim('a', 't1', HOUR),
      (store) => store.release('a', 't1'),
      (store) => store.claim('a', 't2', HOUR),
    ],
    [
      'its lease ran out, then it was claimed again',
      (store) => store.claim('a', 't1', 10),
      async () => jest.advanceTimersByTime(10),
      (store) => store.claim('a', 't2', HOUR),
    ],
    [
      'swept while idle, then marked done again',
      (store) => store.markDone('a', 't', 10),
      async () => jest.advanceTimersByTime(60_000),
      (store) => store.markDone('a', 't', HOUR),
    ],
  ])('evicts by age a key that left and came back: %s', async (_name, write, leave, comeBack) => {
    const logger = captureLogger();
    const store = make({ maxEntries: 3, logger });
    await write(store);
    await store.markDone('b', 't', HOUR);
    await store.markDone('c', 't', HOUR);
    await leave(store);
    await comeBack(store);
    await store.markDone('d', 't', HOUR);
    await store.markDone('e', 't', HOUR);
    expect([await store.get('b'), await store.get('c')]).toEqual([null, null]);
    expect(await store.get('a')).not.toBeNull();
    expect([await store.get('d'), await store.get('e')]).toEqual(['done', 'done']);
    expect(store.size).toBe(3);
    // The first eviction warns at once: the oldest key, not the one that came back.
    expect(logger.records.map((r) => r.meta.lastKey)).toEqual(['b']);
  });

  it.each([
    ['claim', (store: MemoryStore) => store.claim(undefined as never, 't', HOUR)],
    ['claimHandlers', (store: MemoryStore) => store.claimHandlers(undefined as never, 't', HOUR)],
  ])('%s answers a failure as a rejection, never a throw', async (_name, call) => {
    const store = make();
    let answer: Promise<unknown> | undefined;
    expect(() => (answer = call(store))).not.toThrow();
    await expect(answer).rejects.toThrow(TypeError);
  });

  it('reports evictions at most once per interval, with their count', async () => {
    const logger = captureLogger();
    const store = make({ maxEntries: 10, sweepIntervalMs: 60_000, logger });
    for (let i = 0; i < 1_010; i++) await store.markDone(`k${i}`, 't', HOUR);
    expect(logger.records.map((r) => r.meta.evicted)).toEqual([1]);
    jest.advanceTimersByTime(60_000);
    expect(logger.records.map((r) => r.meta.evicted)).toEqual([1, 999]);
    expect(logger.records[1]?.meta).toMatchObject({ lastKey: 'k999', lastState: 'done' });
    jest.advanceTimersByTime(60_000);
    expect(logger.records).toHaveLength(2);
    await store.claim('late', 't', HOUR);
    expect(logger.records.map((r) => r.meta)).toEqual([
      expect.objectContaining({ evicted: 1 }),
      expect.objectContaining({ evicted: 999 }),
      { evicted: 1, lastKey: 'k1000', lastState: 'done', maxEntries: 10 },
    ]);
    expect(logger.messages('warn')[2]).toMatch(/evicted 1 key before .* \(the last a done key\)/);
  });

  it('stays within maxEntries and keeps its queue bounded when keys are released out of order', async () => {
    const store = make({ maxEntries: 100 });
    for (let i = 0; i < 20_000; i++) {
      await store.claim(`k${i}`, 't', HOUR);
      if (i % 3 !== 0) await store.release(`k${i}`, 't');
      else await store.markDone(`k${i}`, 't', HOUR);
    }
    // Only done keys remain, the newest ones: released keys left the map and their slots the queue.
    const doneKeys = Array.from({ length: 6_667 }, (_, n) => `k${3 * n}`);
    const kept = [];
    for (const key of doneKeys) if ((await store.get(key)) === 'done') kept.push(key);
    expect(store.size).toBe(kept.length);
    expect(kept).toEqual(doneKeys.slice(-kept.length));
    expect(kept.length).toBeGreaterThanOrEqual(99);
  });

  it('does not warn when only expired keys make room', async () => {
    const logger = captureLogger();
    const store = make({ maxEntries: 2, logger });
    await store.markDone('a', 't', 10);
    await store.markDone('b', 't', 10);
    jest.advanceTimersByTime(20);
    await store.markDone('c', 't', HOUR);
    expect(logger.messages('warn')).toEqual([]);
  });

  it('never holds the process open', () => {
    jest.useRealTimers();
    const spy = jest.spyOn(global, 'setInterval');
    make();
    const timer = spy.mock.results[0]?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    spy.mockRestore();
  });

  it('defaults to 100 000 entries', async () => {
    const logger = captureLogger();
    const store = make({ logger });
    for (let i = 0; i <= 100_000; i++) await store.markDone(`k${i}`, 't', HOUR);
    expect(store.size).toBe(100_000);
    expect(await store.get('k0')).toBeNull();
    expect(await store.get('k1')).toBe('done');
    expect(logger.messages('warn')).toHaveLength(1);
  });

  it.each([
    ['maxEntries 0', { maxEntries: 0 }],
    ['maxEntries 1.5', { maxEntries: 1.5 }],
    ['sweepIntervalMs -1', { sweepIntervalMs: -1 }],
    ['maxEntries as text', { maxEntries: '10' }],
    ['a misspelt option', { maxEntry: 10 }],
    ['null options', null],
    ['options that are a number', 100],
    ['a logger that is not an object', { logger: 'console' }],
  ])('throws at construction for %s', (_name, options) => {
    expect(() => new MemoryStore(options as never)).toThrow(OptionsError);
  });

  it('names the option it does not know, with a hint', () => {
    expect(() => new MemoryStore({ sweepInterval: 10 } as never)).toThrow(
      '[service-webhooks] MemoryStore: unknown option "sweepInterval"; did you mean "sweepIntervalMs"?',
    );
  });
});
