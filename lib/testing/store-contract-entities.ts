// The entity cases of runStoreContract (store-contract.ts): what { ordering: 'newest-wins' } needs.
import { sortableTime } from '../core/dispatch/event-position';
import type { EntityOrderingStore, EntityPosition } from '../idempotency/entity-ordering-store';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import { storedPosition } from '../idempotency/store-keys';
import { ODD_KEYS } from './store-contract-support';

const METHODS = ['leaseEntity', 'advanceEntity', 'releaseEntity'] as const;

/** Whether `a` comes after `b` in the one order of positions: their stored forms' UTF-8 bytes. */
const after = (a: EntityPosition, b: EntityPosition) =>
  Buffer.compare(Buffer.from(storedPosition(a)), Buffer.from(storedPosition(b))) > 0;
const HOUR = 60 * 60 * 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The store's entity operations; undefined when it has none (the cases then do not apply). */
function entitiesOf(store: IdempotencyStore): EntityOrderingStore | undefined {
  const has = METHODS.filter((m) => typeof (store as unknown as Record<string, unknown>)[m] === 'function');
  if (has.length === 0) return undefined;
  if (has.length < METHODS.length) {
    const missing = METHODS.filter((m) => !has.includes(m)).join(', ');
    throw new Error(
      `[service-webhooks] runStoreContract: the store has ${has.join(', ')} but not ${missing}; give it all three or none`,
    );
  }
  return store as unknown as EntityOrderingStore;
}

/** The entity operations of a store whose backend is down, to check they reject too. */
export function entityCalls(store: IdempotencyStore, key: string): Record<string, () => Promise<unknown>> {
  const s = entitiesOf(store);
  if (s === undefined) return {};
  return {
    leaseEntity: () => s.leaseEntity(key, 't', HOUR, at(1, 'e')),
    advanceEntity: () => s.advanceEntity(key, 't', at(1, 'e'), HOUR),
    releaseEntity: () => s.releaseEntity(key, 't'),
    ...(s.renewEntity === undefined ? {} : { renewEntity: () => s.renewEntity!(key, 't', HOUR) }),
  };
}

/** The `second`th second of one minute, and an id: positions that sort by time, then id. */
const at = (second: number, eventId: string): EntityPosition => ({
  time: sortableTime(`2026-11-24T10:00:${String(second).padStart(2, '0')}Z`) as string,
  eventId,
});

interface Globals {
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
  expect(actual: unknown): {
    toBe(expected: unknown): void;
    toEqual(expected: unknown): void;
    not: { toBe(expected: unknown): void };
  };
}

/** Registers the entity cases; each runs only when the store has the entity operations. */
export function entityCases(
  { it, expect }: Globals,
  store: () => IdempotencyStore,
  key: (label: string) => string,
  shortMs: number,
  claimants: number,
): void {
  const when = (name: string, body: (s: EntityOrderingStore) => Promise<void>, timeoutMs = 15_000) =>
    it(
      `entities: ${name}`,
      async () => {
        const s = entitiesOf(store());
        if (s !== undefined) await body(s);
      },
      timeoutMs,
    );

  when(
    'leases once; a newer event meanwhile is busy; once processed, older and equal events are stale',
    async (s) => {
      const k = key('entity-basic');
      expect(await s.leaseEntity(k, 't1', HOUR, at(2, 'b'))).toBe('leased');
      expect(await s.leaseEntity(k, 't2', HOUR, at(3, 'a'))).toBe('busy');
      expect(await s.advanceEntity(k, 't1', at(2, 'b'), HOUR)).not.toBe(false);
      const after = await Promise.all(
        [at(2, 'b'), at(1, 'z'), at(2, 'a')].map((p, i) => s.leaseEntity(k, `s${i}`, HOUR, p)),
      );
      expect(after).toEqual(['stale', 'stale', 'stale']);
      // Same time: the greater id is the newer, whichever came first.
      expect(await s.leaseEntity(k, 't3', HOUR, at(2, 'c'))).toBe('leased');
    },
  );

  when(
    'renewEntity keeps a leased entity past its first lease, for the token that holds it only',
    async (s) => {
      if (s.renewEntity === undefined) return;
      const k = key('entity-renew');
      expect(await s.renewEntity(k, 'holder', HOUR)).toBe(false);
      expect(await s.leaseEntity(k, 'holder', shortMs, at(1, 'e'))).toBe('leased');
      expect(await s.renewEntity(k, 'someone-else', HOUR)).toBe(false);
      expect(await s.renewEntity(k, 'holder', HOUR)).toBe(true);
      // Past its first lease, the entity is still held: a newer event is busy, not leased.
      await sleep(shortMs + 200);
      expect(await s.leaseEntity(k, 'newer', HOUR, at(2, 'e'))).toBe('busy');
      // Renewed short and left: the lease runs out and the newer event takes the entity.
      expect(await s.renewEntity(k, 'holder', shortMs)).toBe(true);
      await sleep(shortMs + 200);
      expect(await s.renewEntity(k, 'holder', HOUR)).toBe(false);
      expect(await s.leaseEntity(k, 'newer', HOUR, at(2, 'e'))).toBe('leased');
      // The old holder can renew it away from the new one neither before nor after its release.
      expect(await s.renewEntity(k, 'holder', HOUR)).toBe(false);
      await s.releaseEntity(k, 'newer');
      expect(await s.renewEntity(k, 'newer', HOUR)).toBe(false);
      expect(await s.leaseEntity(k, 'next', HOUR, at(3, 'e'))).toBe('leased');
      // Nor does a renewal survive an advance: the lease is freed with it.
      await s.advanceEntity(k, 'next', at(3, 'e'), HOUR);
      expect(await s.renewEntity(k, 'next', HOUR)).toBe(false);
      expect(await s.leaseEntity(k, 'last', HOUR, at(4, 'e'))).toBe('leased');
    },
  );

  when('a release after a failure advances nothing and frees the entity', async (s) => {
    const k = key('entity-failed');
    expect(await s.leaseEntity(k, 't1', HOUR, at(5, 'e'))).toBe('leased');
    await s.releaseEntity(k, 'someone-else');
    expect(await s.leaseEntity(k, 't2', HOUR, at(4, 'e'))).toBe('busy');
    await s.releaseEntity(k, 't1');
    expect(await s.leaseEntity(k, 't2', HOUR, at(4, 'e'))).toBe('leased');
  });

  when('the newest position never goes down', async (s) => {
    const k = key('entity-monotonic');
    await s.leaseEntity(k, 't1', HOUR, at(9, 'e'));
    await s.advanceEntity(k, 't1', at(9, 'e'), HOUR);
    await s.advanceEntity(k, 'late', at(3, 'e'), HOUR);
    expect(await s.leaseEntity(k, 't2', HOUR, at(5, 'e'))).toBe('stale');
    expect(await s.leaseEntity(k, 't2', HOUR, at(10, 'e'))).toBe('leased');
  });

  when(
    'fences the lease: a run that outran it frees nothing, yet its success still raises the position',
    async (s) => {
      const k = key('entity-fenced');
      expect(await s.leaseEntity(k, 'overran', shortMs, at(1, 'e'))).toBe('leased');
      await sleep(shortMs + 200);
      expect(await s.leaseEntity(k, 'holder', HOUR, at(2, 'e'))).toBe('leased');
      await s.releaseEntity(k, 'overran');
      expect(await s.advanceEntity(k, 'overran', at(3, 'e'), HOUR)).toBe(false);
      expect(await s.leaseEntity(k, 'next', HOUR, at(4, 'e'))).toBe('busy');
      await s.releaseEntity(k, 'holder');
      expect(await s.leaseEntity(k, 'next', HOUR, at(2, 'f'))).toBe('stale');
      expect(await s.leaseEntity(k, 'next', HOUR, at(4, 'e'))).toBe('leased');
    },
  );

  when('forgets an entity after its retention', async (s) => {
    const k = key('entity-retention');
    await s.leaseEntity(k, 't1', HOUR, at(5, 'e'));
    await s.advanceEntity(k, 't1', at(5, 'e'), shortMs);
    expect(await s.leaseEntity(k, 't2', HOUR, at(4, 'e'))).toBe('stale');
    await sleep(shortMs + 200);
    expect(await s.leaseEntity(k, 't2', HOUR, at(4, 'e'))).toBe('leased');
  });

  when(
    `leases one entity to exactly one of ${claimants} newer events racing for it`,
    async (s) => {
      const k = key('entity-race');
      const race = await Promise.all(
        Array.from({ length: claimants }, (_, i) =>
          s.leaseEntity(k, `t${i}`, HOUR, at(10 + (i % 40), `e${i}`)),
        ),
      );
      expect(race.filter((r) => r === 'leased').length).toBe(1);
      expect(race.filter((r) => r === 'busy').length).toBe(claimants - 1);
    },
    30_000,
  );

  when(
    'keeps entity keys apart from event keys and from each other, odd ones too',
    async (s) => {
      const k = key('entity-apart');
      expect(await store().claim(k, 't', HOUR)).toBe('claimed');
      expect(await s.leaseEntity(k, 't', HOUR, at(1, 'e'))).toBe('leased');
      const odd = ODD_KEYS.map((o) => key(`entity:${o}`));
      const leases = await Promise.all(odd.map((o, i) => s.leaseEntity(o, `t${i}`, HOUR, at(1, 'e'))));
      expect(leases).toEqual(odd.map(() => 'leased'));
    },
    30_000,
  );

  when(
    "breaks ties by the event id, as every store does: by its stored form's UTF-8 bytes",
    async (s) => {
      const plain = ['', 'A', 'B', 'a', 'ab', 'b', 'é'];
      const k = key('entity-ids');
      for (const [i, id] of plain.entries()) {
        expect(await s.leaseEntity(k, `t${i}`, HOUR, at(7, id))).toBe('leased');
        expect(await s.advanceEntity(k, `t${i}`, at(7, id), HOUR)).not.toBe(false);
      }
      expect(await s.leaseEntity(k, 'again', HOUR, at(7, 'a'))).toBe('stale');
      // Long or odd ids are stored as their hash (storedPosition), and UTF-8 orders U+FFFD before 😀
      // where UTF-16 code units put it after: one rule, so a tie ends alike on every store.
      const ids = [...ODD_KEYS.slice(0, 11), 'x'.repeat(300), '\uFFFD', '😀', '\uE000 private', 'ω'];
      const results: string[] = [];
      const expected: string[] = [];
      for (const [i, x] of ids.entries()) {
        const y = ids[(i + 1) % ids.length] as string;
        const e = key(`entity-ids-${i}`);
        await s.leaseEntity(e, 'first', HOUR, at(7, x));
        await s.advanceEntity(e, 'first', at(7, x), HOUR);
        results.push(await s.leaseEntity(e, 'second', HOUR, at(7, y)));
        expected.push(after(at(7, y), at(7, x)) ? 'leased' : 'stale');
      }
      expect(results).toEqual(expected);
      expect(new Set(expected)).toEqual(new Set(['leased', 'stale']));
    },
    30_000,
  );
}
