import { resolveLogger, type Logger } from '../logger';
import type { EntityLeaseResult, EntityOrderingStore, EntityPosition } from './entity-ordering-store';
import { ANSWERS_NOW, type StoreCallsNow } from './answers-now';
import { EntryQueue, GONE } from './entry-queue';
import { EvictionReport } from './eviction-report';
import type { ClaimResult, HandlersClaim, IdempotencyStore, KeyState } from './idempotency-store';
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
 * released), the expiry as milliseconds after the store's start so it stays a small integer. Once a
 * handler's success is recorded, `handlers` holds the names and the entry outlives its lease:
 * `expires` is then the retention, `leaseEnd` the lease's end, and a null token means free, not done.
 */
interface Entry {
  readonly key: string;
  token: string | null;
  expires: number;
  handlers?: string[];
  leaseEnd?: number;
  /** Runs of the event's handlers that failed (released with a retention), once one has. */
  runs?: number;
}

const NONE: readonly string[] = [];
/** A new event's claim: shared, so the common case allocates no answer. */
const NEW_CLAIM: HandlersClaim = Object.freeze({ result: 'claimed', succeeded: NONE, attempt: 1 });
const BUSY: HandlersClaim = Object.freeze({ result: 'busy', succeeded: NONE });
const DONE: HandlersClaim = Object.freeze({ result: 'done', succeeded: NONE });

/** Whether `token` holds a live lease on the entry. */
function holds(entry: Entry, token: string, now: number): boolean {
  return entry.token === token && (entry.handlers === undefined || (entry.leaseEnd as number) > now);
}

/** Neither done nor held: an entry with recorded handlers whose lease ended or was given back. */
function free(entry: Entry, now: number): boolean {
  return entry.handlers !== undefined && (entry.token === null || (entry.leaseEnd as number) <= now);
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
  #callsNow: StoreCallsNow | undefined;

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
    return this.#claim(key, token, leaseMs);
  }

  async claimHandlers(key: string, token: string, leaseMs: number): Promise<HandlersClaim> {
    return this.#claimHandlers(key, token, leaseMs);
  }

  /**
   * The receiver's way in: the same steps as `claim`, `claimHandlers`, `markDone` and `release`,
   * answered at once, so a delivery does not wait a promise turn for each. Undefined once any of
   * those methods was replaced (a subclass, a spy): the replacement is then what gets called.
   *
   * @internal The receiver's, not part of the store's API.
   */
  [ANSWERS_NOW](): StoreCallsNow | undefined {
    const own = MemoryStore.prototype;
    if (
      this.claim !== own.claim ||
      this.claimHandlers !== own.claimHandlers ||
      this.markDone !== own.markDone ||
      this.release !== own.release
    )
      return undefined;
    return (this.#callsNow ??= {
      claim: (key, token, leaseMs) => this.#claim(key, token, leaseMs),
      claimHandlers: (key, token, leaseMs) => this.#claimHandlers(key, token, leaseMs),
      markDone: (key, token, retentionMs) => this.#markDone(key, token, retentionMs),
      release: (key, token, retentionMs) => this.#release(key, token, retentionMs),
    });
  }

  #claim(key: string, token: string, leaseMs: number): ClaimResult {
    // A key built by concatenation is a rope: reading one character makes V8 flatten it, once, so
    // the map hashes and compares flat text and keeps ~200 bytes less per entry (measured).
    key.charCodeAt(0);
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry !== undefined) {
      if (entry.handlers === undefined) return entry.token === null ? 'done' : 'busy';
      return this.#takeOver(entry, token, leaseMs, now) ? 'claimed' : 'busy';
    }
    this.#add({ key, token, expires: now + leaseMs }, now);
    return 'claimed';
  }

  #claimHandlers(key: string, token: string, leaseMs: number): HandlersClaim {
    key.charCodeAt(0);
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry === undefined) {
      this.#add({ key, token, expires: now + leaseMs }, now);
      return NEW_CLAIM;
    }
    if (entry.handlers === undefined) return entry.token === null ? DONE : BUSY;
    if (!this.#takeOver(entry, token, leaseMs, now)) return BUSY;
    return { result: 'claimed', succeeded: [...entry.handlers], attempt: (entry.runs ?? 0) + 1 };
  }

  /** Leases an entry with recorded handlers, when it is free; its records stay. */
  #takeOver(entry: Entry, token: string, leaseMs: number, now: number): boolean {
    if (!free(entry, now)) return false;
    entry.token = token;
    entry.leaseEnd = now + leaseMs;
    entry.expires = Math.max(entry.expires, entry.leaseEnd);
    return true;
  }

  async markHandlerDone(key: string, token: string, handler: string, retentionMs: number): Promise<boolean> {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry === undefined || !holds(entry, token, now)) return false;
    if (entry.handlers === undefined) {
      // The lease's end moves to leaseEnd; the entry itself is now kept as long as the event.
      entry.leaseEnd = entry.expires;
      entry.handlers = [handler];
    } else if (!entry.handlers.includes(handler)) entry.handlers.push(handler);
    entry.expires = Math.max(entry.expires, now + retentionMs);
    return true;
  }

  async markDone(key: string, token: string, retentionMs: number): Promise<boolean> {
    return this.#markDone(key, token, retentionMs);
  }

  #markDone(key: string, token: string, retentionMs: number): boolean {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry === undefined) {
      this.#add({ key, token: null, expires: now + retentionMs }, now);
      return true;
    }
    // Another delivery took the lease over (this one outran it): its outcome decides.
    if (entry.token !== null && entry.token !== token && !free(entry, now)) return false;
    // Done in place: the entry keeps its queue slot, so a claim and its markDone cost one slot.
    entry.token = null;
    entry.expires = now + retentionMs;
    // Only an entry that recorded handlers has these: writing them on the others would add three
    // properties to every entry (a second allocation each, and a slower shape).
    if (entry.handlers !== undefined) {
      entry.handlers = undefined;
      entry.leaseEnd = undefined;
      entry.runs = undefined;
    }
    return true;
  }

  async renewLease(key: string, token: string, leaseMs: number): Promise<boolean> {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry === undefined || !holds(entry, token, now)) return false;
    // In place, as markDone: the queue reads the entry's expiry when it comes to its slot.
    if (entry.handlers === undefined) entry.expires = now + leaseMs;
    else {
      entry.leaseEnd = now + leaseMs;
      entry.expires = Math.max(entry.expires, entry.leaseEnd);
    }
    return true;
  }

  async release(key: string, token: string, retentionMs?: number): Promise<void> {
    this.#release(key, token, retentionMs);
  }

  #release(key: string, token: string, retentionMs?: number): void {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.token !== token) return;
    if (retentionMs !== undefined) {
      // A failed run: counted, and kept with the successes (if any) as long as the event.
      if (entry.handlers === undefined) {
        entry.handlers = [];
        entry.leaseEnd = entry.expires;
      }
      entry.runs = (entry.runs ?? 0) + 1;
      entry.expires = Math.max(entry.expires, this.#now() + retentionMs);
    }
    // The handlers' recorded successes stay: the next delivery runs only the others.
    if (entry.handlers === undefined) this.#remove(entry);
    else entry.token = null;
  }

  async get(key: string): Promise<KeyState | null> {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry === undefined || free(entry, now)) return null;
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
    this.#report.evicted(
      entry.key,
      entry.token === null && entry.handlers === undefined ? 'done' : 'processing',
    );
  }

  /** The timer's work: sweep every expired key, and report the evictions since the last warning. */
  #tick(): void {
    this.#queue.compact(this.#now());
    this.#entities.sweep(this.#now());
    this.#report.tick();
  }
}
