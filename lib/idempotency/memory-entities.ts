import type { EntityLeaseResult, EntityPosition } from './entity-ordering-store';
import { EntryQueue, GONE } from './entry-queue';
import { PASS_OVER, type EvictionReport } from './eviction-report';
import { positionAtOrAfter, storedPosition } from './store-keys';

/**
 * One entity: its lease (token and end) and its newest processed position, held and compared as the
 * shared stores hold and compare it (store-keys.ts), so a tie of two events ends alike on every store.
 */
interface EntityEntry {
  readonly key: string;
  token: string | null;
  leaseUntil: number;
  mark: string | null;
  expires: number;
}

/** Leased by a run now: its token set and its lease not run out. */
function held(entry: EntityEntry, now: number): boolean {
  return entry.token !== null && entry.leaseUntil > now;
}

/**
 * The entity operations of {@link MemoryStore}, in a map of their own beside the event keys (so an
 * entity key can never meet an event key), bounded by the same `maxEntries`, swept the same way.
 */
export class MemoryEntities {
  readonly #entries = new Map<string, EntityEntry>();
  readonly #queue = new EntryQueue<EntityEntry>((entry) => this.#remove(entry));

  constructor(
    private readonly maxEntries: number,
    private readonly report: EvictionReport,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  lease(
    key: string,
    token: string,
    leaseMs: number,
    position: EntityPosition,
    now: number,
  ): EntityLeaseResult {
    const mark = storedPosition(position);
    const entry = this.#live(key, now);
    if (entry?.mark != null && positionAtOrAfter(entry.mark, mark)) return 'stale';
    if (entry !== undefined && held(entry, now)) return 'busy';
    const until = now + leaseMs;
    if (entry === undefined) {
      this.#add({ key, token, leaseUntil: until, mark: null, expires: until }, now);
    } else {
      entry.token = token;
      entry.leaseUntil = until;
      entry.expires = Math.max(entry.expires, until);
    }
    return 'leased';
  }

  advance(key: string, token: string, position: EntityPosition, retentionMs: number, now: number): boolean {
    const mark = storedPosition(position);
    const entry = this.#live(key, now);
    if (entry === undefined) {
      this.#add({ key, token: null, leaseUntil: 0, mark, expires: now + retentionMs }, now);
      return true;
    }
    if (entry.mark === null || !positionAtOrAfter(entry.mark, mark)) entry.mark = mark;
    if (entry.token === token) entry.token = null;
    // Kept for the retention from now, or longer while another delivery's lease runs.
    entry.expires = now + retentionMs;
    if (entry.token !== null) entry.expires = Math.max(entry.expires, entry.leaseUntil);
    return entry.token === null;
  }

  renew(key: string, token: string, leaseMs: number, now: number): boolean {
    const entry = this.#live(key, now);
    if (entry === undefined || entry.token !== token || entry.leaseUntil <= now) return false;
    entry.leaseUntil = now + leaseMs;
    entry.expires = Math.max(entry.expires, entry.leaseUntil);
    return true;
  }

  release(key: string, token: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.token !== token) return;
    if (entry.mark === null) this.#remove(entry);
    else entry.token = null;
  }

  /** Sweeps every expired entity. */
  sweep(now: number): void {
    this.#queue.compact(now);
  }

  #live(key: string, now: number): EntityEntry | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.expires > now) return entry;
    this.#remove(entry);
    return undefined;
  }

  #remove(entry: EntityEntry): void {
    this.#entries.delete(entry.key);
    entry.expires = GONE;
  }

  #add(entry: EntityEntry, now: number): void {
    this.#entries.set(entry.key, entry);
    this.#queue.push(entry);
    this.#queue.dropExpiredAtHead(now, 4);
    let passedOver = 0;
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#queue.shift();
      if (oldest === undefined) break;
      // Held by an ordered run: evicted, the entity's next event could run beside it.
      if (held(oldest, now)) {
        this.#queue.push(oldest);
        if (++passedOver === PASS_OVER) break;
        continue;
      }
      this.#remove(oldest);
      this.report.evicted(oldest.key, oldest.mark === null ? 'processing' : 'done');
    }
    if (this.#queue.length > 2 * this.#entries.size + 1024) this.#queue.compact(now);
  }
}
