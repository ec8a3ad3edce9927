import { MemoryStore, OptionsError } from '../lib';
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
    expect(logger.messages('warn')).toHaveLength(1);
    expect(logger.messages('warn')[0]).toMatch(/evicted a done key before its time ran out/);
    expect(logger.records[0]?.meta).toMatchObject({ key: 'a', maxEntries: 3 });
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
    expect(logger.messages('warn')).toHaveLength(1);
  });

  it.each([
    ['maxEntries 0', { maxEntries: 0 }],
    ['maxEntries 1.5', { maxEntries: 1.5 }],
    ['sweepIntervalMs -1', { sweepIntervalMs: -1 }],
  ])('throws at construction for %s', (_name, options) => {
    expect(() => new MemoryStore(options)).toThrow(OptionsError);
  });
});
