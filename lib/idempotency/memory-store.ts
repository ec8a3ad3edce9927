import { resolveLogger, type Logger } from '../logger';
import { OptionsError } from '../options-error';
import type { ClaimResult, IdempotencyStore, KeyState } from './idempotency-store';

export interface MemoryStoreOptions {
  /** Most keys held at once; past it the oldest is evicted, with a warning. Defaults to `100_000`. */
  maxEntries?: number;
  /** How often expired keys are swept while idle, in milliseconds. Defaults to `60_000`. */
  sweepIntervalMs?: number;
  /** Where the eviction warning goes. Defaults to the console. */
  logger?: Logger | false;
}

interface Entry {
  state: KeyState;
  token: string;
  expiresAt: number;
}

/**
 * The default {@link IdempotencyStore}: one process's memory. It forgets everything on restart and is
 * not shared between instances; use a shared store for either. Every operation is O(1) amortized.
 */
export class MemoryStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #maxEntries: number;
  readonly #log;
  readonly #timer: NodeJS.Timeout;

  constructor(options: MemoryStoreOptions = {}) {
    const { maxEntries = 100_000, sweepIntervalMs = 60_000 } = options;
    for (const [name, value] of Object.entries({ maxEntries, sweepIntervalMs })) {
      if (!Number.isSafeInteger(value) || value <= 0) {
        throw new OptionsError(
          'ERR_SW_STORE',
          'MemoryStore',
          `${name} must be a positive whole number (got ${String(value)})`,
        );
      }
    }
    this.#maxEntries = maxEntries;
    this.#log = resolveLogger(options.logger, 'MemoryStore');
    this.#timer = setInterval(() => this.#sweep(Number.POSITIVE_INFINITY), sweepIntervalMs);
    this.#timer.unref();
  }

  /** Keys held now, expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size;
  }

  async claim(key: string, token: string, leaseMs: number): Promise<ClaimResult> {
    const entry = this.#live(key);
    if (entry !== undefined) return entry.state === 'done' ? 'done' : 'busy';
    this.#set(key, { state: 'processing', token, expiresAt: Date.now() + leaseMs });
    return 'claimed';
  }

  async markDone(key: string, token: string, retentionMs: number): Promise<void> {
    this.#set(key, { state: 'done', token, expiresAt: Date.now() + retentionMs });
  }

  async release(key: string, token: string): Promise<void> {
    const entry = this.#entries.get(key);
    if (entry?.state === 'processing' && entry.token === token) this.#entries.delete(key);
  }

  async get(key: string): Promise<KeyState | null> {
    return this.#live(key)?.state ?? null;
  }

  /** Stops the sweep timer (it never holds the process open, but tests may want it gone). */
  close(): void {
    clearInterval(this.#timer);
  }

  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.expiresAt <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #set(key: string, entry: Entry): void {
    // Re-inserting keeps the Map in write order, so the oldest write is always first.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    this.#sweep(8);
    if (this.#entries.size > this.#maxEntries) this.#evictOldest();
  }

  #evictOldest(): void {
    const oldest = this.#entries.entries().next().value;
    if (oldest === undefined) return;
    const [key, entry] = oldest;
    this.#entries.delete(key);
    this.#log.warn(
      { key, state: entry.state, maxEntries: this.#maxEntries },
      `MemoryStore is full: evicted a ${entry.state} key before its time ran out, so a duplicate of that event could run its handlers again; raise maxEntries or use a shared store`,
    );
  }

  /** Drops expired keys from the front, where the oldest writes are; stops at the first live one or after `budget`. */
  #sweep(budget: number): void {
    const now = Date.now();
    let checked = 0;
    for (const [key, entry] of this.#entries) {
      if (checked++ >= budget) return;
      if (entry.expiresAt > now) {
        if (budget !== Number.POSITIVE_INFINITY) return;
        continue;
      }
      this.#entries.delete(key);
    }
  }
}
