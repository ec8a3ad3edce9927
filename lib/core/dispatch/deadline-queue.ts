/** What a wait resolves with when its deadline came first. */
export const TIMED_OUT = Symbol('timed out');

interface Watch {
  readonly deadline: number;
  /** Dropped once settled, so a settled slot holds neither the promise nor its outcome. */
  resolve: ((value: unknown) => void) | undefined;
}

export interface DeadlineQueue {
  /** How long each wait lasts. */
  readonly timeoutMs: number;
  /**
   * `work`'s outcome (its rejection, if it rejects first), or {@link TIMED_OUT} once `timeoutMs` have
   * passed since `startedAt` (a `performance.now()`).
   */
  wait<T>(work: Promise<T>, startedAt: number): Promise<T | typeof TIMED_OUT>;
  /**
   * `wait(work, startedAt).then(settled, failed)` as one promise: what `settled` makes of `work`'s
   * value (or of {@link TIMED_OUT}), or `failed` of its rejection, each called at most once, and a
   * throw of either the promise's rejection. A rejection after the deadline is dropped unseen, as
   * `wait`'s is. Work that is no promise fails a turn later, never within this call; a thenable that
   * calls back at once is answered at once, so a caller must be ready for either before it calls.
   * The enqueue an inbox acknowledges waits this way: the promise and the turn of the `.then` are left
   * out of every acknowledgement.
   */
  waitThen<T, R>(
    work: Promise<T>,
    startedAt: number,
    settled: (outcome: T | typeof TIMED_OUT) => R | PromiseLike<R>,
    failed: (error: unknown) => R | PromiseLike<R>,
  ): Promise<R>;
  /**
   * Calls `onTimeout` once `timeoutMs` have passed since `startedAt`, unless the returned function
   * was called first: a setTimeout and its clearTimeout without a Timeout object each.
   */
  after(startedAt: number, onTimeout: () => void): () => void;
}

/**
 * The timeouts of one dispatcher's deliveries. They all wait the same `timeoutMs`, so their deadlines
 * fall in the order they started: one first-in queue and one timer armed for the oldest live deadline,
 * instead of a setTimeout and a clearTimeout per delivery (about 250 ns and a Timeout object each).
 * The timer holds the process open while a delivery waits, as a timer of its own would, and no longer.
 */
export function deadlineQueue(timeoutMs: number): DeadlineQueue {
  let slots: (Watch | undefined)[] = [];
  let head = 0;
  let live = 0;
  let timer: NodeJS.Timeout | undefined;
  /** The deadline the timer was armed for: when it fires, that one is due whatever performance.now() says. */
  let armedFor = 0;
  /**
   * The setTimeout the timer came from: a test that installs or removes fake timers between two waits
   * leaves a timer of the other clock, which would never fire; it is replaced instead of reused.
   */
  let armedWith: typeof setTimeout | undefined;

  /** Drops settled slots from the head; the array is rebuilt once they are half of it. */
  function advance(): void {
    while (head < slots.length && slots[head]?.resolve === undefined) slots[head++] = undefined;
    if (head === slots.length) {
      // Emptied in place: one delivery at a time must not allocate an array each.
      slots.length = 0;
      head = 0;
    } else if (head > 1024 && head * 2 > slots.length) {
      slots = slots.slice(head);
      head = 0;
    }
  }

  function arm(deadline: number): void {
    // Rounded up, as a delivery's own setTimeout(timeoutMs) would fire: not before its deadline's millisecond.
    armedFor = deadline;
    armedWith = setTimeout;
    timer = setTimeout(fire, Math.max(1, Math.ceil(deadline - performance.now())));
  }

  function fire(): void {
    timer = undefined;
    // The timer's word counts: under a test's fake timers (which often leave performance.now() real) a
    // delivery must time out when the clock the user advances says so, as a timer of its own would.
    const now = Math.max(performance.now(), armedFor);
    for (let i = head; i < slots.length; i++) {
      const watch = slots[i];
      if (watch?.resolve === undefined) continue;
      if (watch.deadline > now) break;
      const resolve = watch.resolve;
      watch.resolve = undefined;
      live--;
      resolve(TIMED_OUT);
    }
    advance();
    const next = slots[head];
    if (live > 0 && next !== undefined) arm(next.deadline);
  }

  function start(watch: Watch): void {
    slots.push(watch);
    if (live++ === 0) {
      // A timer left from an earlier wait is armed for an earlier deadline: it fires, finds this
      // one not yet due and re-arms for it.
      if (timer === undefined || armedWith !== setTimeout) arm(watch.deadline);
      else timer.ref();
    }
  }

  /** Whether the watch was still waiting; it no longer is. */
  function settle(watch: Watch): boolean {
    if (watch.resolve === undefined) return false;
    watch.resolve = undefined;
    if (--live === 0) timer?.unref();
    if (slots[head] === watch) advance();
    return true;
  }

  return {
    timeoutMs,
    wait<T>(work: Promise<T>, startedAt: number): Promise<T | typeof TIMED_OUT> {
      return new Promise<T | typeof TIMED_OUT>((resolve, reject) => {
        const watch: Watch = {
          deadline: startedAt + timeoutMs,
          resolve: resolve as (value: unknown) => void,
        };
        // A rejection before the deadline is the wait's; one after it is observed and dropped. Bound
        // before the watch starts: work that is no promise (an Inbox of the app's) throws here, and
        // its wait rejects with no timer left running.
        work.then(
          (outcome) => {
            if (settle(watch)) resolve(outcome);
          },
          (error: unknown) => {
            if (settle(watch)) reject(error);
          },
        );
        start(watch);
      });
    },
    waitThen<T, R>(
      work: Promise<T>,
      startedAt: number,
      settled: (outcome: T | typeof TIMED_OUT) => R | PromiseLike<R>,
      failed: (error: unknown) => R | PromiseLike<R>,
    ): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        const done = (outcome: unknown, rejected?: true) => {
          try {
            resolve(rejected ? failed(outcome) : settled(outcome as T | typeof TIMED_OUT));
          } catch (thrown) {
            reject(thrown);
          }
        };
        const watch: Watch = { deadline: startedAt + timeoutMs, resolve: done };
        try {
          work.then(
            (outcome) => {
              if (settle(watch)) done(outcome);
            },
            (error: unknown) => {
              if (settle(watch)) done(error, true);
            },
          );
        } catch (error) {
          // Work that is no promise (an Inbox of the app's) fails as its rejection would: a turn
          // later, never within this call, and with no timer left.
          void Promise.resolve().then(() => done(error, true));
          return;
        }
        start(watch);
      });
    },
    after(startedAt: number, onTimeout: () => void): () => void {
      const watch: Watch = { deadline: startedAt + timeoutMs, resolve: onTimeout };
      start(watch);
      return () => void settle(watch);
    },
  };
}
