import { resolveLogger, type Logger } from '../logger';
import type { EntityLeaseResult, EntityOrderingStore, EntityPosition } from './entity-ordering-store';
import { EntryQueue, GONE } from './entry-queue';
import { EvictionReport } from './eviction-report';
import type { ClaimResult, IdempotencyStore, KeyState } from './idempotency-store';
import { MemoryEntities } from './memory-entities';
import { checkStoreOptions, wholePositive } from './store-options';

/** Options of {@link MemoryStore}. */
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
export class MemoryStore implements IdempotencyStore, EntityOrderingStore {
  /** Always `true`: a Map in this process answers at once, so the receiver bounds none of its calls. */
  readonly answersAtOnce = true;
  readonly #entries = new Map<string, Entry>();
  readonly #queue = new EntryQueue<Entry>((entry) => this.#remove(entry));
  readonly #start = Date.now();
  readonly #maxEntries: number;
  readonly #report: EvictionReport;
  readonly #timer: NodeJS.Timeout;
  readonly #entities: MemoryEntities;

  constructor(options: MemoryStoreOptions = {}) {
    checkStoreOptions(
      options,
      KNOWN_KEYS,
      'MemoryStore',
      'options must be an object, e.g. { maxEntries: 100_000 }',
    );
    const { maxEntries = 100_000, sweepIntervalMs = 60_000 } = options;
    wholePositive('MemoryStore', 'maxEntries', maxEntries);
    wholePositive('MemoryStore', 'sweepIntervalMs', sweepIntervalMs);
    this.#maxEntries = maxEntries;
    this.#report = new EvictionReport(resolveLogger(options.logger, 'MemoryStore'), maxEntries);
    this.#entities = new MemoryEntities(maxEntries, this.#report);
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

  async markDone(key: string, token: string, retentionMs: number): Promise<boolean> {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry === undefined) {
      this.#add({ key, token: null, expires: now + retentionMs }, now);
      return true;
    }
    // Another delivery took the lease over (this one outran it): its outcome decides.
    if (entry.token !== null && entry.token !== token) return false;
    // Done in place: the entry keeps its queue slot, so a claim and its markDone cost one slot.
    entry.token = null;
    entry.expires = now + retentionMs;
    return true;
  }

  async renewLease(key: string, token: string, leaseMs: number): Promise<boolean> {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry === undefined || entry.token !== token) return false;
    // In place, as markDone: the queue reads the entry's expiry when it comes to its slot.
    entry.expires = now + leaseMs;
    return true;
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

  async leaseEntity(
    key: string,
    token: string,
    leaseMs: number,
    position: EntityPosition,
  ): Promise<EntityLeaseResult> {
    return this.#entities.lease(key, token, leaseMs, position, this.#now());
  }

  async advanceEntity(
    key: string,
    token: string,
    position: EntityPosition,
    retentionMs: number,
  ): Promise<boolean> {
    return this.#entities.advance(key, token, position, retentionMs, this.#now());
  }

  async renewEntity(key: string, token: string, leaseMs: number): Promise<boolean> {
    return this.#entities.renew(key, token, leaseMs, this.#now());
  }

  async releaseEntity(key: string, token: string): Promise<void> {
    this.#entities.release(key, token);
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
    this.#queue.dropExpiredAtHead(now, 4);
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#queue.shift();
      if (oldest === undefined) break;
      this.#evict(oldest);
    }
    // Stale slots pile up when keys are released or expire out of order: compact now and then.
    if (this.#queue.length > 2 * this.#entries.size + 1024) this.#queue.compact(now);
  }

  #evict(entry: Entry): void {
    this.#remove(entry);
    this.#report.evicted(entry.key, entry.token === null ? 'done' : 'processing');
  }

  /** The timer's work: sweep every expired key, and report the evictions since the last warning. */
  #tick(): void {
    this.#queue.compact(this.#now());
    this.#entities.sweep(this.#now());
    this.#report.tick();
  }
}
