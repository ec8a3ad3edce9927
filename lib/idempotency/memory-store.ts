import { checkOptionKeys } from '../check-option-keys';
import { resolveLogger, type Logger } from '../logger';
import { OptionsError } from '../options-error';
import type { ClaimResult, IdempotencyStore, KeyState } from './idempotency-store';

export interface MemoryStoreOptions {
  /** Most keys held at once; past it the oldest is evicted, with a warning. Defaults to `100_000`. */
  maxEntries?: number;
  /**
   * How often expired keys are swept while idle, and at most how often evictions are reported (one
   * warning with their count), in milliseconds. Defaults to `60_000`.
   */
  sweepIntervalMs?: number;
  /** Where the eviction warning goes. Defaults to the console. */
  logger?: Logger | false;
}

const KNOWN_KEYS = ['maxEntries', 'sweepIntervalMs', 'logger'] as const;
/** The expiry of an entry taken out of the map; its queue slot is then skipped. */
const GONE = -1;

/**
 * One key's state, kept small: three fields, `token` dropped once done (a done key is never
 * released), the expiry as milliseconds after the store's start so it stays a small integer.
 */
interface Entry {
  readonly key: string;
  token: string | null;
  expires: number;
}

/**
 * The default {@link IdempotencyStore}: one process's memory. It forgets everything on restart and is
 * not shared between instances; use a shared store (`service-webhooks/redis`, `service-webhooks/postgres`)
 * for either. Every operation is O(1) amortized, full or not: keys wait in a first-in queue beside the
 * map, so eviction and sweeping take from its head instead of walking the map past deleted slots.
 */
export class MemoryStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  /** Entries in the order they were created; a slot whose entry left the map is skipped when reached. */
  #queue: (Entry | undefined)[] = [];
  #head = 0;
  readonly #start = Date.now();
  readonly #maxEntries: number;
  readonly #log;
  readonly #timer: NodeJS.Timeout;
  #evicted = 0;
  #lastEvicted: KeyState = 'done';
  #lastEvictedKey = '';
  #warnedThisInterval = false;

  constructor(options: MemoryStoreOptions = {}) {
    checkOptionKeys(options, KNOWN_KEYS, 'MemoryStore');
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
    this.#timer = setInterval(() => this.#tick(), sweepIntervalMs);
    this.#timer.unref();
  }

  /** Keys held now, expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size;
  }

  async claim(key: string, token: string, leaseMs: number): Promise<ClaimResult> {
    // A key built by concatenation is a rope: reading one character makes V8 flatten it, once, so
    // the map hashes and compares flat text and keeps ~200 bytes less per entry (measured).
    key.charCodeAt(0);
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry !== undefined) return entry.token === null ? 'done' : 'busy';
    this.#add({ key, token, expires: now + leaseMs }, now);
    return 'claimed';
  }

  async markDone(key: string, _token: string, retentionMs: number): Promise<void> {
    const now = this.#now();
    const entry = this.#entries.get(key);
    if (entry === undefined) return this.#add({ key, token: null, expires: now + retentionMs }, now);
    // Done in place: the entry keeps its queue slot, so a claim and its markDone cost one slot.
    entry.token = null;
    entry.expires = now + retentionMs;
  }

  async release(key: string, token: string): Promise<void> {
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.token === token) this.#remove(entry);
  }

  async get(key: string): Promise<KeyState | null> {
    const entry = this.#live(key, this.#now());
    if (entry === undefined) return null;
    return entry.token === null ? 'done' : 'processing';
  }

  /** Stops the sweep timer (it never holds the process open, but tests may want it gone). */
  close(): void {
    clearInterval(this.#timer);
  }

  /** Milliseconds since the store began: a small integer for weeks, so entries hold no boxed number. */
  #now(): number {
    return Math.max(0, Date.now() - this.#start);
  }

  #live(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.expires > now) return entry;
    this.#remove(entry);
    return undefined;
  }

  /** Takes an entry out of the map and marks it, so its queue slot is known stale without a lookup. */
  #remove(entry: Entry): void {
    this.#entries.delete(entry.key);
    entry.expires = GONE;
  }

  #add(entry: Entry, now: number): void {
    this.#entries.set(entry.key, entry);
    this.#queue.push(entry);
    this.#dropExpiredAtHead(now, 4);
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#shift();
      if (oldest === undefined) break;
      this.#evict(oldest);
    }
    // Stale slots pile up when keys are released or expire out of order: compact now and then.
    if (this.#queue.length - this.#head > 2 * this.#entries.size + 1024) this.#compact(now);
  }

  /** The oldest entry still in the map, taken off the queue. */
  #shift(): Entry | undefined {
    while (this.#head < this.#queue.length) {
      const entry = this.#queue[this.#head];
      this.#queue[this.#head++] = undefined;
      if (entry !== undefined && entry.expires !== GONE) return entry;
    }
    return undefined;
  }

  /** Drops up to `budget` expired or stale slots from the head; stops at the first live entry. */
  #dropExpiredAtHead(now: number, budget: number): void {
    for (let i = 0; i < budget && this.#head < this.#queue.length; i++) {
      const entry = this.#queue[this.#head];
      if (entry !== undefined && entry.expires > now) break;
      if (entry !== undefined && entry.expires !== GONE) this.#remove(entry);
      this.#queue[this.#head++] = undefined;
    }
    // The array keeps its taken slots until they are half of it: one copy per many shifts.
    if (this.#head > 4096 && this.#head * 2 > this.#queue.length) this.#compact(now);
  }

  /** Rebuilds the queue from its live entries, dropping the expired ones from the map as it goes. */
  #compact(now: number): void {
    const live: Entry[] = [];
    for (let i = this.#head; i < this.#queue.length; i++) {
      const entry = this.#queue[i];
      if (entry === undefined || entry.expires === GONE) continue;
      if (entry.expires > now) live.push(entry);
      else this.#remove(entry);
    }
    this.#queue = live;
    this.#head = 0;
  }

  #evict(entry: Entry): void {
    this.#lastEvicted = entry.token === null ? 'done' : 'processing';
    this.#lastEvictedKey = entry.key;
    this.#remove(entry);
    this.#evicted++;
    if (!this.#warnedThisInterval) this.#warn();
  }

  /** The timer's work: sweep every expired key; report the evictions since the last warning, if any. */
  #tick(): void {
    this.#compact(this.#now());
    if (this.#evicted > 0) this.#warn();
    else this.#warnedThisInterval = false;
  }

  /** One warning for every eviction since the last: at most one per interval, never one per key. */
  #warn(): void {
    const evicted = this.#evicted;
    const state = this.#lastEvicted;
    this.#evicted = 0;
    this.#warnedThisInterval = true;
    this.#log.warn(
      { evicted, lastKey: this.#lastEvictedKey, lastState: state, maxEntries: this.#maxEntries },
      `MemoryStore is full: evicted ${evicted} key${evicted === 1 ? '' : 's'} before their time ran out (the last a ${state} key), so a duplicate of those events could run its handlers again; raise maxEntries or use a shared store`,
    );
  }
}
