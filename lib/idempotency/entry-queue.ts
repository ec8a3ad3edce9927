/** The `expires` of an entry that left the store: its slot in the queue is then skipped. */
export const GONE = -1;

/** What the queue holds: anything with an expiry, in the store's milliseconds. */
export interface QueuedEntry {
  expires: number;
}

/**
 * A store's entries in the order they were created, so the oldest is found at the head in O(1)
 * amortized, where walking a `Map` from its start would pass every deleted slot. An entry that left
 * the store is marked {@link GONE} instead of searched for; its slot is skipped when reached, and the
 * array is rebuilt when skipped slots make up half of it.
 */
export class EntryQueue<T extends QueuedEntry> {
  #slots: (T | undefined)[] = [];
  #head = 0;

  /** `expire(entry)` takes an expired entry out of the store (and marks it GONE). */
  constructor(private readonly expire: (entry: T) => void) {}

  /** Slots held, skipped ones included. */
  get length(): number {
    return this.#slots.length - this.#head;
  }

  push(entry: T): void {
    this.#slots.push(entry);
  }

  /** The oldest entry still in the store, taken off the queue. */
  shift(): T | undefined {
    while (this.#head < this.#slots.length) {
      const entry = this.#slots[this.#head];
      this.#slots[this.#head++] = undefined;
      if (entry !== undefined && entry.expires !== GONE) return entry;
    }
    return undefined;
  }

  /** Drops up to `budget` expired or skipped slots from the head; stops at the first live entry. */
  dropExpiredAtHead(now: number, budget: number): void {
    for (let i = 0; i < budget && this.#head < this.#slots.length; i++) {
      const entry = this.#slots[this.#head];
      if (entry !== undefined && entry.expires > now) break;
      if (entry !== undefined && entry.expires !== GONE) this.expire(entry);
      this.#slots[this.#head++] = undefined;
    }
    // Taken slots stay in the array until they are half of it: one copy per many shifts.
    if (this.#head > 4096 && this.#head * 2 > this.#slots.length) this.compact(now);
  }

  /** Rebuilds the queue from its live entries, expiring the others as it goes. */
  compact(now: number): void {
    const live: T[] = [];
    for (let i = this.#head; i < this.#slots.length; i++) {
      const entry = this.#slots[i];
      if (entry === undefined || entry.expires === GONE) continue;
      if (entry.expires > now) live.push(entry);
      else this.expire(entry);
    }
    this.#slots = live;
    this.#head = 0;
  }
}
