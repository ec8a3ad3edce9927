import { randomUUID } from 'node:crypto';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import { entityCalls, entityCases } from './store-contract-entities';
import { handlerCalls, handlerCases } from './store-contract-handlers';
import { renewalCalls, renewalCases } from './store-contract-renewal';
import { checkContractArguments, ODD_KEYS, settledWithin } from './store-contract-support';

/** Builds one store for a case of the contract, fresh each time. */
export type MakeStore = () => IdempotencyStore | Promise<IdempotencyStore>;

/** Options of {@link runStoreContract}. */
export interface StoreContractOptions {
  /** The short lease and retention of the expiry cases, in milliseconds. Defaults to `300`. */
  shortMs?: number;
  /** How many deliveries race for one key. Defaults to `50`. */
  claimants?: number;
  /**
   * Builds the store over a backend that is down (a closed port, a stopped server): every method
   * must then reject, neither hang nor throw synchronously. Without it those cases are skipped.
   */
  makeUnavailableStore?: MakeStore;
  /** Called after the suite with each store it made, to close connections. */
  close?: (store: IdempotencyStore) => unknown;
}

/** The few jest (or vitest with `globals: true`) globals the contract uses, read when it runs. */
interface TestGlobals {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
  beforeAll(body: () => Promise<void>, timeoutMs?: number): void;
  afterAll(body: () => Promise<void>, timeoutMs?: number): void;
  expect(actual: unknown): {
    toBe(expected: unknown): void;
    toEqual(expected: unknown): void;
    not: { toBe(expected: unknown): void };
  };
}

const HOUR = 60 * 60 * 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function globals(): TestGlobals {
  const g = globalThis as Partial<TestGlobals>;
  if (typeof g.describe !== 'function' || typeof g.it !== 'function' || typeof g.expect !== 'function') {
    throw new Error(
      '[service-webhooks] runStoreContract: call it at the top of a jest test file (or vitest with globals: true)',
    );
  }
  return g as TestGlobals;
}

/**
 * The checks every {@link IdempotencyStore} must pass, as a jest `describe` block: claim, busy and
 * done; lease expiry; release, markDone and (when the store has them) renewLease and renewEntity only by the token that holds the key
 * (fencing); retention; many deliveries racing
 * for one key; big and odd keys; and, given `makeUnavailableStore`, failing fast when the backend is
 * down. Run it in your own test file for a store you write: `runStoreContract('MyStore', () => new MyStore())`.
 */
export function runStoreContract(
  name: string,
  makeStore: MakeStore,
  options: StoreContractOptions = {},
): void {
  checkContractArguments(name, makeStore, options);
  const { describe, it, beforeAll, afterAll, expect } = globals();
  const { shortMs = 300, claimants = 50, makeUnavailableStore, close } = options;
  const made: IdempotencyStore[] = [];
  let store: IdempotencyStore;
  let run = '';
  /** A key no earlier run used, so a shared server left over from another run cannot interfere. */
  const key = (label: string) => `contract:${run}:${label}`;

  describe(`${name} meets the IdempotencyStore contract`, () => {
    beforeAll(async () => {
      run = randomUUID();
      store = await makeStore();
      made.push(store);
    }, 30_000);
    afterAll(async () => {
      for (const s of made) await close?.(s);
    }, 30_000);

    it('claims a free key once; the next claim is busy; once done, it is done', async () => {
      expect(await store.get(key('basic'))).toBe(null);
      expect(await store.claim(key('basic'), 't1', HOUR)).toBe('claimed');
      expect(await store.claim(key('basic'), 't2', HOUR)).toBe('busy');
      expect(await store.get(key('basic'))).toBe('processing');
      await store.markDone(key('basic'), 't1', HOUR);
      expect(await store.claim(key('basic'), 't3', HOUR)).toBe('done');
      expect(await store.get(key('basic'))).toBe('done');
    });

    it('releases only for the token that holds the key, and never a done key', async () => {
      await store.claim(key('release'), 't1', HOUR);
      await store.release(key('release'), 'someone-else');
      expect(await store.get(key('release'))).toBe('processing');
      await store.release(key('release'), 't1');
      expect(await store.get(key('release'))).toBe(null);
      expect(await store.claim(key('release'), 't2', HOUR)).toBe('claimed');
      await store.markDone(key('release'), 't2', HOUR);
      await store.release(key('release'), 't2');
      expect(await store.get(key('release'))).toBe('done');
    });

    it('fences markDone: a delivery whose lease was taken over marks nothing, the holder decides', async () => {
      expect(await store.claim(key('fenced'), 'overran', shortMs)).toBe('claimed');
      await sleep(shortMs + 200);
      expect(await store.claim(key('fenced'), 'holder', HOUR)).toBe('claimed');
      // The first delivery's handlers finally succeed: its lease is gone, so this changes nothing.
      expect(await store.markDone(key('fenced'), 'overran', HOUR)).toBe(false);
      expect(await store.get(key('fenced'))).toBe('processing');
      // The holder's handlers fail: the key is free again, so the next delivery runs them.
      await store.release(key('fenced'), 'holder');
      expect(await store.claim(key('fenced'), 'next', HOUR)).toBe('claimed');
      expect(await store.markDone(key('fenced'), 'next', HOUR)).not.toBe(false);
      expect(await store.get(key('fenced'))).toBe('done');
    }, 15_000);

    it('marks done a key whose lease ran out untaken, and a key already done', async () => {
      await store.claim(key('late-done'), 'slow', shortMs);
      await sleep(shortMs + 200);
      expect(await store.markDone(key('late-done'), 'slow', HOUR)).not.toBe(false);
      expect(await store.get(key('late-done'))).toBe('done');
      expect(await store.markDone(key('late-done'), 'another', HOUR)).not.toBe(false);
      expect(await store.claim(key('late-done'), 'after', HOUR)).toBe('done');
    }, 15_000);

    it('frees a key whose lease ran out; the old holder can no longer release it', async () => {
      expect(await store.claim(key('lease'), 'old', shortMs)).toBe('claimed');
      expect(await store.claim(key('lease'), 'new', HOUR)).toBe('busy');
      await sleep(shortMs + 200);
      expect(await store.claim(key('lease'), 'new', HOUR)).toBe('claimed');
      await store.release(key('lease'), 'old');
      expect(await store.get(key('lease'))).toBe('processing');
    }, 15_000);

    it('forgets a done key after its retention', async () => {
      await store.claim(key('retention'), 't1', HOUR);
      await store.markDone(key('retention'), 't1', shortMs);
      expect(await store.get(key('retention'))).toBe('done');
      await sleep(shortMs + 200);
      expect(await store.get(key('retention'))).toBe(null);
      expect(await store.claim(key('retention'), 't2', HOUR)).toBe('claimed');
    }, 15_000);

    it(`gives one key to exactly one of ${claimants} deliveries racing for it`, async () => {
      const race = () =>
        Promise.all(Array.from({ length: claimants }, (_, i) => store.claim(key('race'), `t${i}`, HOUR)));
      const first = await race();
      expect(first.filter((r) => r === 'claimed').length).toBe(1);
      expect(first.filter((r) => r === 'busy').length).toBe(claimants - 1);
      await store.markDone(key('race'), `t${first.indexOf('claimed')}`, HOUR);
      expect(new Set(await race())).toEqual(new Set(['done']));
    }, 30_000);

    it(`gives a key whose lease ran out to exactly one of ${claimants} racing deliveries`, async () => {
      await store.claim(key('expired-race'), 'crashed', shortMs);
      await sleep(shortMs + 200);
      const claims = await Promise.all(
        Array.from({ length: claimants }, (_, i) => store.claim(key('expired-race'), `t${i}`, HOUR)),
      );
      expect(claims.filter((r) => r === 'claimed').length).toBe(1);
      expect(claims.filter((r) => r === 'busy').length).toBe(claimants - 1);
    }, 30_000);

    it('keeps big and odd keys apart and holds each faithfully', async () => {
      const keys = ODD_KEYS.map((k) => key(k));
      const claims = await Promise.all(keys.map((k, i) => store.claim(k, `t${i}`, HOUR)));
      expect(claims).toEqual(keys.map(() => 'claimed'));
      await store.markDone(keys[1] ?? '', 't1', HOUR);
      const states = await Promise.all(keys.map((k) => store.get(k)));
      expect(states).toEqual(keys.map((_, i) => (i === 1 ? 'done' : 'processing')));
    }, 30_000);

    renewalCases({ it, expect }, () => store, key, shortMs);
    handlerCases({ it, expect }, () => store, key, shortMs);
    entityCases({ it, expect }, () => store, key, shortMs, claimants);

    if (makeUnavailableStore) {
      it('rejects every call at once when its backend is down, never hangs', async () => {
        const down = await makeUnavailableStore();
        made.push(down);
        const calls: Record<string, () => Promise<unknown>> = {
          claim: () => down.claim(key('down'), 't', HOUR),
          markDone: () => down.markDone(key('down'), 't', HOUR),
          release: () => down.release(key('down'), 't'),
          get: () => down.get(key('down')),
          ...renewalCalls(down, key('down')),
          ...handlerCalls(down, key('down')),
          ...entityCalls(down, key('down')),
        };
        const results: Record<string, string> = {};
        for (const [method, call] of Object.entries(calls))
          results[method] = await settledWithin(call, 5_000);
        expect(results).toEqual(Object.fromEntries(Object.keys(calls).map((m) => [m, 'rejected'])));
      }, 30_000);
    }
  });
}
