import { resolveLogger, type Logger } from '../logger';
import type { EntityLeaseResult, EntityOrderingStore, EntityPosition } from './entity-ordering-store';
import { ANSWERS_NOW, type StoreCallsNow } from './answers-now';
import { EvictionReport, PASS_OVER } from './eviction-report';
import type { ClaimResult, HandlersClaim, IdempotencyStore, KeyState } from './idempotency-store';
import { KeyQueue } from './key-queue';
import { MemoryEntities } from './memory-entities';
import { checkStoreOptions, wholePositive } from './store-options';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Keys held before the oldest is evicted, with a warning (event keys and entity keys each). A key
   * whose lease is held (a run in flight) is not evicted: the map holds those over the bound until
   * their runs end (so the memory bound is this plus the runs in flight). Defaults to `100_000`.
   */
  maxEntries?: number;
  /**
   * How often expired keys are swept, and at most how often evictions are reported (one warning with
   * their count), in milliseconds. Between sweeps an expired key goes when it is read, or when the
   * store is full and it is the oldest. Defaults to `60_000`.
   */
  sweepIntervalMs?: number;
  /** Where the eviction warning goes. Defaults to the console. */
  logger?: Logger | false;
}

const KNOWN_KEYS = ['maxEntries', 'sweepIntervalMs', 'logger'] as const;

/**
 * A key being handled: two fields, the expiry as milliseconds after the store's start so it stays a
 * small integer. Once a handler's success is recorded, `handlers` holds the names and the lease
 * outlives its end: `expires` is then the retention, `leaseEnd` the lease's end, and a null token
 * means free.
 */
interface Lease {
  token: string | null;
  expires: number;
  handlers?: string[];
  leaseEnd?: number;
  /** Runs of the event's handlers that failed (released with a retention), once one has. */
  runs?: number;
}

/**
 * One key's state. A done key (most of them, held for hours) is its expiry alone, a small integer the
 * map holds without an object: no allocation that lives, nothing for the collector to copy or mark.
 */
type Entry = Lease | number;

/** When the entry expires, in the store's milliseconds. */
function expiryOf(entry: Entry): number {
  return typeof entry === 'number' ? entry : entry.expires;
}

// Frozen: every store in the process hands out these answers, so a caller's push must not reach the next.
const NONE: readonly string[] = Object.freeze([]);
/** A new event's claim: shared, so the common case allocates no answer. */
const NEW_CLAIM: HandlersClaim = Object.freeze({ result: 'claimed', succeeded: NONE, attempt: 1 });
const BUSY: HandlersClaim = Object.freeze({ result: 'busy', succeeded: NONE });
const DONE: HandlersClaim = Object.freeze({ result: 'done', succeeded: NONE });

// The async methods' fixed answers, settled once: a settled promise never changes, so every caller
// may await the same one, and a call allocates no promise of its own.
const CLAIM_ANSWERS: Readonly<Record<ClaimResult, Promise<ClaimResult>>> = {
  claimed: Promise.resolve('claimed'),
  busy: Promise.resolve('busy'),
  done: Promise.resolve('done'),
};
const NEW_CLAIM_ANSWER = Promise.resolve(NEW_CLAIM);
const BUSY_ANSWER = Promise.resolve(BUSY);
const DONE_ANSWER = Promise.resolve(DONE);
const TRUE = Promise.resolve(true);
const FALSE = Promise.resolve(false);
const VOID = Promise.resolve();

/** Whether `token` holds a live lease on the entry. */
function holds(entry: Entry, token: string, now: number): entry is Lease {
  return (
    typeof entry !== 'number' &&
    entry.token === token &&
    (entry.handlers === undefined || (entry.leaseEnd as number) > now)
  );
}

/**
 * Held by a run now: a first lease not run out (its token is never null), or a lease with recorded
 * handlers that is not {@link free}.
 */
function running(entry: Entry, now: number): boolean {
  return (
    typeof entry !== 'number' && (entry.handlers === undefined ? entry.expires > now : !free(entry, now))
  );
}

/** Neither done nor held: a lease with recorded handlers that ended or was given back. */
function free(entry: Lease, now: number): boolean {
  return entry.handlers !== undefined && (entry.token === null || (entry.leaseEnd as number) <= now);
}

/**
 * The default {@link IdempotencyStore}: one process's memory. It forgets everything on restart and is
 * not shared between instances; use a shared store (`service-webhooks/redis`, `service-webhooks/postgres`)
 * for either. Every operation is O(1) amortized, full or not: keys wait in a first-in queue beside the
 * map, so eviction takes from its head instead of walking the map past deleted slots.
 */
export class MemoryStore implements IdempotencyStore, EntityOrderingStore {
  /** Always `true`: a Map in this process answers at once, so the receiver bounds none of its calls. */
  readonly answersAtOnce = true;
  readonly #entries = new Map<string, Entry>();
  readonly #queue = new KeyQueue();
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

  // Not async functions: a throw is still a rejection, but an answer is a settled promise made once.
  claim(key: string, token: string, leaseMs: number): Promise<ClaimResult> {
    try {
      return CLAIM_ANSWERS[this.#claim(key, token, leaseMs)];
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  claimHandlers(key: string, token: string, leaseMs: number): Promise<HandlersClaim> {
    try {
      const claim = this.#claimHandlers(key, token, leaseMs);
      if (claim === NEW_CLAIM) return NEW_CLAIM_ANSWER;
      if (claim === BUSY) return BUSY_ANSWER;
      return claim === DONE ? DONE_ANSWER : Promise.resolve(claim);
    } catch (error) {
      return Promise.reject(error as Error);
    }
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
      if (typeof entry === 'number') return 'done';
      return this.#takeOver(entry, token, leaseMs, now) ? 'claimed' : 'busy';
    }
    this.#add(key, { token, expires: now + leaseMs }, now);
    return 'claimed';
  }

  #claimHandlers(key: string, token: string, leaseMs: number): HandlersClaim {
    key.charCodeAt(0);
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry === undefined) {
      this.#add(key, { token, expires: now + leaseMs }, now);
      return NEW_CLAIM;
    }
    if (typeof entry === 'number') return DONE;
    if (!this.#takeOver(entry, token, leaseMs, now)) return BUSY;
    return {
      result: 'claimed',
      succeeded: [...(entry.handlers as string[])],
      attempt: (entry.runs ?? 0) + 1,
    };
  }

  /** Leases an entry with recorded handlers, when it is free (one without is held); its records stay. */
  #takeOver(entry: Lease, token: string, leaseMs: number, now: number): boolean {
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

  markDone(key: string, token: string, retentionMs: number): Promise<boolean> {
    try {
      return this.#markDone(key, token, retentionMs) ? TRUE : FALSE;
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  #markDone(key: string, token: string, retentionMs: number): boolean {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry === undefined) {
      this.#add(key, now + retentionMs, now);
      return true;
    }
    // Another delivery took the lease over (this one outran it): its outcome decides.
    if (typeof entry !== 'number' && entry.token !== null && entry.token !== token && !free(entry, now))
      return false;
    // Done in place: the key keeps its place in the map and its queue slot, so a claim and its
    // markDone cost one slot; the lease and its records are dropped.
    this.#entries.set(key, now + retentionMs);
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

  release(key: string, token: string, retentionMs?: number): Promise<void> {
    try {
      this.#release(key, token, retentionMs);
      return VOID;
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  #release(key: string, token: string, retentionMs?: number): void {
    const entry = this.#entries.get(key);
    // A done key is never released.
    if (entry === undefined || typeof entry === 'number' || entry.token !== token) return;
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
    if (entry.handlers === undefined) this.#remove(key);
    else entry.token = null;
  }

  async get(key: string): Promise<KeyState | null> {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry === undefined) return null;
    if (typeof entry === 'number') return 'done';
    return free(entry, now) ? null : 'processing';
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
    if (entry === undefined || expiryOf(entry) > now) return entry;
    this.#remove(key);
    return undefined;
  }

  /** Takes a key out of the map elsewhere than at the queue's head, so its slot there is skipped. */
  #remove(key: string): void {
    this.#entries.delete(key);
    this.#queue.left(key);
  }

  #add(key: string, entry: Entry, now: number): void {
    this.#entries.set(key, entry);
    this.#queue.push(key);
    if (this.#entries.size > this.#maxEntries) this.#makeRoom(now);
    // Stale slots pile up when keys are released or expire out of order: rebuild now and then.
    if (this.#queue.length > 2 * this.#entries.size + 1024) this.#queue.rebuild(this.#entries.keys());
  }

  /**
   * Takes the oldest keys out until the map is within its bound; an expired one goes unreported. A
   * key whose lease is held (a run in flight) is passed over, to the tail: evicted, another try of its
   * event (a worker's retry, a second receiver on this store) would run the handlers beside that run.
   * At most `PASS_OVER` a call, so a call stays O(1) when the runs in flight outnumber the bound; the
   * map then holds more than its bound, by the runs in flight and the keys queued behind them, until
   * later calls reach those.
   */
  #makeRoom(now: number): void {
    let passedOver = 0;
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#queue.shift();
      if (oldest === undefined) break;
      const entry = this.#entries.get(oldest) as Entry;
      if (running(entry, now)) {
        this.#queue.push(oldest);
        if (++passedOver === PASS_OVER) break;
        continue;
      }
      this.#entries.delete(oldest);
      if (expiryOf(entry) > now)
        this.#report.evicted(oldest, typeof entry === 'number' ? 'done' : 'processing');
    }
  }

  /** The timer's work: sweep every expired key, and report the evictions since the last warning. */
  #tick(): void {
    const now = this.#now();
    // Deleting while forEach walks a Map is safe: the walk goes on past the deleted key.
    this.#entries.forEach((entry, key) => {
      if (expiryOf(entry) <= now) this.#entries.delete(key);
    });
    this.#queue.rebuild(this.#entries.keys());
    this.#entities.sweep(now);
    this.#report.tick();
  }
}
