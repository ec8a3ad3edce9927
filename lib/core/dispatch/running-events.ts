/** An event running in this process: its id, and what `idle()` waits for. */
export interface RunningEvent {
  eventId: string;
  done: Promise<unknown>;
}

/** The dispatcher's events in flight by idempotency key: the part of a `Map` it uses. */
export interface RunningEvents {
  readonly size: number;
  has(key: string): boolean;
  set(key: string, entry: RunningEvent): void;
  delete(key: string): void;
  values(): IterableIterator<RunningEvent>;
}

/**
 * A `Map` whose entries are emptied as they leave it. The map lives as long as the receiver, so V8
 * keeps its hash table in old space, and with one add and one delete a request the table is rebuilt
 * every few dozen requests (deleted slots are reclaimed only by a copy), the copy in old space too.
 * The old copy is garbage, but it keeps pointing at the entries that were in flight when it was
 * copied, and until a full collection every scavenge treats those pointers as roots: an entry's
 * pending promise, and through its reactions the whole request, survived scavenges and was promoted
 * (about 200 bytes a request, scavenges three times as long, with a real enqueue to wait on).
 * Emptied, a left entry reaches nothing.
 */
export function runningEvents(): RunningEvents {
  const entries = new Map<string, RunningEvent>();
  const empty = (entry: RunningEvent | undefined) => {
    if (entry === undefined) return;
    entry.eventId = '';
    entry.done = EMPTY;
  };
  return {
    get size() {
      return entries.size;
    },
    has: (key) => entries.has(key),
    set(key, entry) {
      empty(entries.get(key));
      entries.set(key, entry);
    },
    delete(key) {
      empty(entries.get(key));
      entries.delete(key);
    },
    values: () => entries.values(),
  };
}

const EMPTY: Promise<unknown> = Promise.resolve();
