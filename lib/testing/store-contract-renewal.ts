// The lease-renewal cases of runStoreContract (store-contract.ts): what a queued try running long needs.
import type { IdempotencyStore } from '../idempotency/idempotency-store';

const HOUR = 60 * 60 * 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type RenewingStore = IdempotencyStore & Required<Pick<IdempotencyStore, 'renewLease'>>;

/** The store, when it renews leases (the cases then apply); a store without `renewLease` skips them. */
function renewing(store: IdempotencyStore): RenewingStore | undefined {
  return typeof store.renewLease === 'function' ? (store as RenewingStore) : undefined;
}

/** `renewLease` of a store whose backend is down, to check it rejects too. */
export function renewalCalls(store: IdempotencyStore, key: string): Record<string, () => Promise<unknown>> {
  const s = renewing(store);
  return s === undefined ? {} : { renewLease: () => s.renewLease(key, 't', HOUR) };
}

interface Globals {
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
  expect(actual: unknown): { toBe(expected: unknown): void };
}

/** The renewal rows: a renewed lease outlives its first term; only the holder renews, never a done key. */
export function renewalCases(
  { it, expect }: Globals,
  store: () => IdempotencyStore,
  key: (label: string) => string,
  shortMs: number,
): void {
  it('renewLease keeps a held key past its first lease, for the token that holds it only', async () => {
    const s = renewing(store());
    if (s === undefined) return;
    expect(await s.claim(key('renew'), 'holder', shortMs)).toBe('claimed');
    expect(await s.renewLease(key('renew'), 'someone-else', HOUR)).toBe(false);
    expect(await s.renewLease(key('renew'), 'holder', HOUR)).toBe(true);
    // Past its first lease, the key is still held: renewed, not run out.
    await sleep(shortMs + 200);
    expect(await s.claim(key('renew'), 'next', HOUR)).toBe('busy');
    // Renewed short and left: the lease runs out and the next delivery takes the key.
    expect(await s.renewLease(key('renew'), 'holder', shortMs)).toBe(true);
    await sleep(shortMs + 200);
    expect(await s.claim(key('renew'), 'next', HOUR)).toBe('claimed');
    // The old holder can no longer take it back, nor renew it away from the new one.
    expect(await s.renewLease(key('renew'), 'holder', HOUR)).toBe(false);
    expect(await s.get(key('renew'))).toBe('processing');
    await s.release(key('renew'), 'next');
    expect(await s.get(key('renew'))).toBe(null);
  }, 15_000);

  it('renewLease renews neither a done key, nor a released or unknown one', async () => {
    const s = renewing(store());
    if (s === undefined) return;
    expect(await s.renewLease(key('renew-unknown'), 't1', HOUR)).toBe(false);
    expect(await s.get(key('renew-unknown'))).toBe(null);
    await s.claim(key('renew-released'), 't1', HOUR);
    await s.release(key('renew-released'), 't1');
    expect(await s.renewLease(key('renew-released'), 't1', HOUR)).toBe(false);
    expect(await s.claim(key('renew-released'), 't2', HOUR)).toBe('claimed');
    await s.claim(key('renew-done'), 't1', HOUR);
    await s.markDone(key('renew-done'), 't1', shortMs);
    // A done key keeps its retention: a renewal must not turn it back into a lease, nor extend it.
    expect(await s.renewLease(key('renew-done'), 't1', HOUR)).toBe(false);
    expect(await s.get(key('renew-done'))).toBe('done');
    await sleep(shortMs + 200);
    expect(await s.get(key('renew-done'))).toBe(null);
  }, 15_000);
}
