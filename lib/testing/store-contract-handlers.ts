// The per-handler cases of runStoreContract (store-contract.ts): what a retried event of several
// handlers needs to run only the handlers that have not succeeded.
import type { HandlersClaim, IdempotencyStore } from '../idempotency/idempotency-store';
import type { ContractGlobals } from './store-contract-support';

const HOUR = 60 * 60 * 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A claim's result and names, without the attempt a store may leave out. */
const names = ({ result, succeeded }: HandlersClaim) => ({ result, succeeded });

type HandlerStore = IdempotencyStore & Required<Pick<IdempotencyStore, 'claimHandlers' | 'markHandlerDone'>>;

/** The store, when it records handlers (the cases then apply); a store without both methods skips them. */
function recording(store: IdempotencyStore): HandlerStore | undefined {
  return typeof store.claimHandlers === 'function' && typeof store.markHandlerDone === 'function'
    ? (store as HandlerStore)
    : undefined;
}

/** `claimHandlers` and `markHandlerDone` of a store whose backend is down, to check they reject too. */
export function handlerCalls(store: IdempotencyStore, key: string): Record<string, () => Promise<unknown>> {
  const s = recording(store);
  return s === undefined
    ? {}
    : {
        claimHandlers: () => s.claimHandlers(key, 't', HOUR),
        markHandlerDone: () => s.markHandlerDone(key, 't', 'crm', HOUR),
      };
}

/** The per-handler rows: recorded once, fenced by the lease's token, kept past the lease, forgotten with the event. */
export function handlerCases(
  { it, expect }: ContractGlobals,
  store: () => IdempotencyStore,
  key: (label: string) => string,
  shortMs: number,
): void {
  it("records a handler's success once; the next claim after a failure names it, and the event done ends it", async () => {
    const s = recording(store());
    if (s === undefined) return;
    const k = key('handlers');
    expect(names(await s.claimHandlers(k, 't1', HOUR))).toEqual({ result: 'claimed', succeeded: [] });
    expect(await s.markHandlerDone(k, 't1', 'crm', HOUR)).toBe(true);
    expect(await s.markHandlerDone(k, 't1', 'crm', HOUR)).toBe(true);
    expect(await s.claimHandlers(k, 't2', HOUR)).toEqual({ result: 'busy', succeeded: [] });
    expect(await s.claim(k, 't2', HOUR)).toBe('busy');
    expect(await s.get(k)).toBe('processing');
    // Another handler failed: the key is given back, the success stays.
    await s.release(k, 't1');
    expect(await s.get(k)).toBe(null);
    const again = await s.claimHandlers(k, 't2', HOUR);
    expect(names(again)).toEqual({ result: 'claimed', succeeded: ['crm'] });
    expect(await s.markHandlerDone(k, 't2', 'welcome-email', HOUR)).toBe(true);
    await s.release(k, 't2');
    const third = await s.claimHandlers(k, 't3', HOUR);
    expect([third.result, [...third.succeeded].sort()]).toEqual(['claimed', ['crm', 'welcome-email']]);
    expect((await s.markDone(k, 't3', HOUR)) !== false).toBe(true);
    expect(await s.claimHandlers(k, 't4', HOUR)).toEqual({ result: 'done', succeeded: [] });
    expect(await s.claim(k, 't4', HOUR)).toBe('done');
    expect(await s.get(k)).toBe('done');
    expect(await s.markHandlerDone(k, 't3', 'crm', HOUR)).toBe(false);
  });

  it("fences markHandlerDone: only the live lease's token records, never a late run for the next holder", async () => {
    const s = recording(store());
    if (s === undefined) return;
    const k = key('handlers-fenced');
    expect(await s.markHandlerDone(k, 'nobody', 'crm', HOUR)).toBe(false);
    expect(await s.claim(k, 'overran', shortMs)).toBe('claimed');
    expect(await s.markHandlerDone(k, 'someone-else', 'crm', HOUR)).toBe(false);
    await sleep(shortMs + 200);
    // Its lease ran out: the late success records nothing.
    expect(await s.markHandlerDone(k, 'overran', 'crm', HOUR)).toBe(false);
    expect(names(await s.claimHandlers(k, 'holder', HOUR))).toEqual({ result: 'claimed', succeeded: [] });
    expect(await s.markHandlerDone(k, 'overran', 'crm', HOUR)).toBe(false);
    await s.release(k, 'holder');
    expect(names(await s.claimHandlers(k, 'next', HOUR))).toEqual({ result: 'claimed', succeeded: [] });
  }, 15_000);

  it('keeps a recorded success past the lease that recorded it; the lease still runs out', async () => {
    const s = recording(store());
    if (s === undefined) return;
    const k = key('handlers-lease');
    expect(await s.claim(k, 'crashed', shortMs)).toBe('claimed');
    expect(await s.markHandlerDone(k, 'crashed', 'audit', HOUR)).toBe(true);
    expect(await s.claim(k, 'early', HOUR)).toBe('busy');
    await sleep(shortMs + 200);
    // The holder died: its lease ran out, its handler's success did not.
    expect(names(await s.claimHandlers(k, 'next', shortMs))).toEqual({
      result: 'claimed',
      succeeded: ['audit'],
    });
    expect(await s.markHandlerDone(k, 'crashed', 'crm', HOUR)).toBe(false);
    expect((await s.renewLease?.(k, 'crashed', HOUR)) === true).toBe(false);
    await sleep(shortMs + 200);
    // A plain claim takes it too, and markDone of a lease that ran out untaken applies.
    expect(await s.claim(k, 'plain', HOUR)).toBe('claimed');
    expect(await s.markDone(k, 'next', HOUR)).toBe(false);
    expect((await s.markDone(k, 'plain', HOUR)) !== false).toBe(true);
    expect(await s.get(k)).toBe('done');
  }, 15_000);

  it('counts the failed runs: attempt is 1, then one more after each release with a retention, not after one without', async () => {
    const s = recording(store());
    if (s === undefined) return;
    const k = key('handlers-attempt');
    const attempt = async (token: string) => {
      const claimed = await s.claimHandlers(k, token, HOUR);
      expect(claimed.result).toBe('claimed');
      return claimed.attempt ?? 1;
    };
    expect(await attempt('t1')).toBe(1);
    // Every handler failed: nothing recorded, the run still counted.
    await s.release(k, 't1', HOUR);
    expect(await s.get(k)).toBe(null);
    expect(await attempt('t2')).toBe(2);
    expect(await s.markHandlerDone(k, 't2', 'crm', HOUR)).toBe(true);
    await s.release(k, 't2', HOUR);
    // Given back with nothing run (another event of its entity was busy): not counted.
    expect(await attempt('t3')).toBe(3);
    await s.release(k, 't3');
    // A release by a token that does not hold the key counts nothing.
    await s.release(k, 'stranger', HOUR);
    const fourth = await s.claimHandlers(k, 't4', HOUR);
    expect([fourth.result, fourth.attempt ?? 1, fourth.succeeded]).toEqual(['claimed', 3, ['crm']]);
    expect(await s.claimHandlers(k, 't5', HOUR)).toEqual({ result: 'busy', succeeded: [] });
    expect((await s.markDone(k, 't4', HOUR)) !== false).toBe(true);
    expect(await s.claimHandlers(k, 't6', HOUR)).toEqual({ result: 'done', succeeded: [] });
    // Another event starts at 1.
    const other = await s.claimHandlers(key('handlers-attempt-other'), 't1', HOUR);
    expect([other.result, other.attempt ?? 1]).toEqual(['claimed', 1]);
  });

  it("keeps a failed run's count with the event's retention, then forgets it", async () => {
    const s = recording(store());
    if (s === undefined) return;
    const k = key('handlers-attempt-retention');
    await s.claimHandlers(k, 't1', shortMs);
    await s.release(k, 't1', shortMs);
    expect((await s.claimHandlers(k, 't2', shortMs)).attempt ?? 1).toBe(2);
    await s.release(k, 't2');
    await sleep(shortMs + 200);
    expect((await s.claimHandlers(k, 't3', HOUR)).attempt ?? 1).toBe(1);
  }, 15_000);

  it("forgets a handler's success with the event's retention", async () => {
    const s = recording(store());
    if (s === undefined) return;
    const k = key('handlers-retention');
    await s.claim(k, 't1', shortMs);
    expect(await s.markHandlerDone(k, 't1', 'crm', shortMs)).toBe(true);
    await s.release(k, 't1');
    await sleep(shortMs + 200);
    expect(await s.get(k)).toBe(null);
    expect(names(await s.claimHandlers(k, 't2', HOUR))).toEqual({ result: 'claimed', succeeded: [] });
  }, 15_000);
}
