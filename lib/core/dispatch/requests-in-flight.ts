/**
 * The requests inside the receiver, for `drain()`: a count and the waiters of its reaching zero. Not a
 * `Set` of their promises: a long-lived hash table with one add and one delete a request has its
 * table rebuilt in old space as it churns (about 120 bytes a request, freed only by a full
 * collection), and drain only needs to know when none is left.
 */
export interface RequestsInFlight {
  /** How many requests are inside now. */
  readonly size: number;
  /** A request entered and has something left to wait for. */
  enter(): void;
  /** A request that entered was answered (or failed). */
  leave(): void;
  /** Resolves once no request is inside (at once when none is). */
  settled(): Promise<void>;
}

export function requestsInFlight(): RequestsInFlight {
  let size = 0;
  let waiters: (() => void)[] = [];
  return {
    get size() {
      return size;
    },
    enter() {
      size++;
    },
    leave() {
      if (--size > 0 || waiters.length === 0) return;
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    },
    settled() {
      if (size === 0) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}
