/**
 * A map's keys in the order they were added (a key the store passes over, taken from the head and
 * pushed again, counts as added then), so the oldest is found at the head in O(1) amortized,
 * where walking a `Map` from its start would pass every deleted slot. It holds keys, not entries, so
 * a store's entry may be a bare number. A key that left the map by another way than the head keeps
 * its slot, counted stale: the stale slots of a key always come before its live one (a key comes
 * back only at the tail), so the head skips as many of that key's slots as are counted.
 */
export class KeyQueue {
  #slots: (string | undefined)[] = [];
  #head = 0;
  /** Slots left behind by keys that left the map elsewhere than at the head, by key. */
  readonly #stale = new Map<string, number>();

  /** Slots held, stale ones included. */
  get length(): number {
    return this.#slots.length - this.#head;
  }

  push(key: string): void {
    this.#slots.push(key);
  }

  /** `key` left the map elsewhere than at the head: its slot is skipped when reached. */
  left(key: string): void {
    this.#stale.set(key, (this.#stale.get(key) ?? 0) + 1);
  }

  /** The oldest key still in the map, taken off the queue. */
  shift(): string | undefined {
    while (this.#head < this.#slots.length) {
      const key = this.#slots[this.#head] as string;
      this.#slots[this.#head++] = undefined;
      if (this.#stale.size !== 0 && this.#skipped(key)) continue;
      // Taken slots stay in the array until they are half of it: one copy per many shifts.
      if (this.#head > 4096 && this.#head * 2 > this.#slots.length) {
        this.#slots = this.#slots.slice(this.#head);
        this.#head = 0;
      }
      return key;
    }
    return undefined;
  }

  /**
   * Starts again from the map's own keys, in its order (the order they were first added: a key passed
   * over goes back to its first place, and is passed over again when reached).
   */
  rebuild(keys: Iterable<string>): void {
    this.#slots = Array.from(keys);
    this.#head = 0;
    this.#stale.clear();
  }

  #skipped(key: string): boolean {
    const count = this.#stale.get(key);
    if (count === undefined) return false;
    if (count === 1) this.#stale.delete(key);
    else this.#stale.set(key, count - 1);
    return true;
  }
}
