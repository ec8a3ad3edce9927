import type { ResolvedLogger } from '../logger';
import type { KeyState } from './idempotency-store';

/**
 * Held leases a store's eviction passes over in one call at most: a call stays O(1) when the runs in
 * flight outnumber the bound, and the map is over its bound meanwhile by those runs.
 */
export const PASS_OVER = 8;

/**
 * Reports a full MemoryStore's evictions without flooding the log: the first eviction warns at once,
 * later ones are counted and reported together at the next `tick()`, so at most one warning per
 * interval, never one per key (a million events past the cap would otherwise be a million lines).
 */
export class EvictionReport {
  #count = 0;
  #lastKey = '';
  #lastState: KeyState = 'done';
  #warnedThisInterval = false;

  constructor(
    private readonly log: ResolvedLogger,
    private readonly maxEntries: number,
  ) {}

  evicted(key: string, state: KeyState): void {
    this.#count++;
    this.#lastKey = key;
    this.#lastState = state;
    if (!this.#warnedThisInterval) this.#warn();
  }

  /** Called once per interval: reports the evictions since the last warning, if any. */
  tick(): void {
    if (this.#count > 0) this.#warn();
    else this.#warnedThisInterval = false;
  }

  #warn(): void {
    const evicted = this.#count;
    const state = this.#lastState;
    this.#count = 0;
    this.#warnedThisInterval = true;
    this.log.warn(
      { evicted, lastKey: this.#lastKey, lastState: state, maxEntries: this.maxEntries },
      `MemoryStore is full: evicted ${evicted} key${evicted === 1 ? '' : 's'} before their time ran out (the last a ${state} key), so a duplicate of those events could run its handlers again; raise maxEntries or use a shared store`,
    );
  }
}
