import { deadlineQueue, TIMED_OUT } from '../lib/core/dispatch/deadline-queue';

/**
 * A promise the test settles when it chooses. Not support/gate.ts: that one arms a timer of its own,
 * and these tests count the timers that hold the process open.
 */
function gate<T>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

const refTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('deadlineQueue', () => {
  it('resolves with the outcome when the work settles first', async () => {
    const queue = deadlineQueue(1_000);
    await expect(queue.wait(Promise.resolve('done'), performance.now())).resolves.toBe('done');
  });

  // An enqueue's bound waits on work that can reject (the engine down): the rejection is the wait's,
  // at once, not an unhandled rejection and a TIMED_OUT at the deadline; one after the deadline is
  // observed and dropped.
  it("rejects with the work's rejection when it comes first, and drops one that comes after the deadline", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const queue = deadlineQueue(1_000);
      const down = new Error('the engine is down');
      const timers = refTimers();
      await expect(queue.wait(Promise.reject(down), performance.now())).rejects.toBe(down);
      // Freed: its timer no longer holds the process open.
      expect(refTimers()).toBe(timers);
      const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('late')), 30));
      await expect(deadlineQueue(10).wait(late, performance.now())).resolves.toBe(TIMED_OUT);
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  // An Inbox is the app's to write: an enqueue that hands back no promise fails its wait at once,
  // and leaves no timer holding the process open until the deadline.
  it('rejects a wait on work that is no promise, with no timer left running', async () => {
    const queue = deadlineQueue(60_000);
    const timers = refTimers();
    await expect(queue.wait(undefined as unknown as Promise<void>, performance.now())).rejects.toThrow(
      TypeError,
    );
    expect(refTimers()).toBe(timers);
  });

  it('resolves TIMED_OUT no sooner than timeoutMs after the start, while the work hangs', async () => {
    const queue = deadlineQueue(40);
    const started = performance.now();
    const hanging = gate<string>();
    await expect(queue.wait(hanging.promise, started)).resolves.toBe(TIMED_OUT);
    // Within the timers' millisecond, as a delivery's own setTimeout(40) would be (libuv's clock is in ms).
    expect(performance.now() - started).toBeGreaterThanOrEqual(39);
    hanging.open('late'); // a late outcome changes nothing
  });

  it('times out each hanging wait at its own deadline, and lets the settled ones through', async () => {
    // On the fake clock (performance.now() too): a busy machine must not carry the check past the
    // second deadline, as real time did once at a load of 20.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const queue = deadlineQueue(60);
      const first = gate<string>();
      const second = gate<string>();
      const third = gate<string>();
      let firstOutcome: unknown = 'pending';
      let secondOutcome: unknown = 'pending';
      void queue.wait(first.promise, performance.now()).then((value) => (firstOutcome = value));
      await jest.advanceTimersByTimeAsync(30);
      const t1 = performance.now();
      const b = queue.wait(second.promise, t1);
      void b.then((value) => (secondOutcome = value));
      const c = queue.wait(third.promise, t1);
      third.open('third');
      await expect(c).resolves.toBe('third');
      await jest.advanceTimersByTimeAsync(29);
      expect(firstOutcome).toBe('pending');
      await jest.advanceTimersByTimeAsync(1);
      expect(firstOutcome).toBe(TIMED_OUT);
      // The first deadline passed, the second not yet: the second is still waiting.
      expect(secondOutcome).toBe('pending');
      second.open('second');
      await expect(b).resolves.toBe('second');
    } finally {
      jest.useRealTimers();
    }
  });

  it('times out when fake timers say so, though performance.now() stays real (vitest and legacy jest fake timers)', async () => {
    jest.useFakeTimers({ doNotFake: ['performance'] });
    try {
      const queue = deadlineQueue(30_000);
      const hanging = gate<string>();
      let outcome: unknown = 'pending';
      void queue.wait(hanging.promise, performance.now()).then((value) => (outcome = value));
      await jest.advanceTimersByTimeAsync(29_000);
      expect(outcome).toBe('pending');
      await jest.advanceTimersByTimeAsync(1_000);
      expect(outcome).toBe(TIMED_OUT);
    } finally {
      jest.useRealTimers();
    }
  });

  it('holds the process open only while a wait is pending', async () => {
    const before = refTimers();
    const queue = deadlineQueue(10_000);
    const hanging = gate<string>();
    const waiting = queue.wait(hanging.promise, performance.now());
    expect(refTimers()).toBe(before + 1);
    hanging.open('done');
    await expect(waiting).resolves.toBe('done');
    expect(refTimers()).toBe(before);
    // A later wait holds it again, on the timer left armed.
    const again = gate<string>();
    const next = queue.wait(again.promise, performance.now());
    expect(refTimers()).toBe(before + 1);
    again.open('again');
    await next;
    expect(refTimers()).toBe(before);
  });

  it('times out on the clock of the moment: a timer left armed by the other clock is not reused', async () => {
    // node-body's queue is shared by every receiver of a process: a test suite that turns fake timers
    // on and off between two body reads must still see the second one time out on its own clock.
    const queue = deadlineQueue(10_000);
    const settled = gate<string>();
    const first = queue.wait(settled.promise, performance.now());
    settled.open('done');
    await first;
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      let calls = 0;
      queue.after(performance.now(), () => void (calls += 1));
      await jest.advanceTimersByTimeAsync(10_000);
      expect(calls).toBe(1);
    } finally {
      jest.useRealTimers();
    }
    // And back on the real clock, after a fake timer was left armed.
    const hanging = gate<string>();
    const short = deadlineQueue(20);
    const left = gate<string>();
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const fakeWait = short.wait(left.promise, performance.now());
    left.open('fake');
    await fakeWait;
    jest.useRealTimers();
    await expect(short.wait(hanging.promise, performance.now())).resolves.toBe(TIMED_OUT);
  });

  it('keeps up with many waits, settled in and out of order', async () => {
    const queue = deadlineQueue(10_000);
    const gates = Array.from({ length: 5_000 }, () => gate<number>());
    const waits = gates.map((g) => queue.wait(g.promise, performance.now()));
    for (let i = gates.length - 1; i >= 0; i -= 2) gates[i]?.open(i);
    for (let i = 0; i < gates.length; i += 2) gates[i]?.open(i);
    const outcomes = await Promise.all(waits);
    expect(outcomes).toEqual(gates.map((_, i) => i));
  });

  describe('after: a callback instead of a promise', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['performance'] }));
    afterEach(() => jest.useRealTimers());

    it('calls back once the deadline passed, once, and not for a watch cancelled before', async () => {
      const queue = deadlineQueue(5_000);
      const calls: string[] = [];
      const t0 = performance.now();
      queue.after(t0, () => calls.push('first'));
      const cancel = queue.after(t0, () => calls.push('cancelled'));
      queue.after(t0, () => calls.push('third'));
      cancel();
      await jest.advanceTimersByTimeAsync(4_000);
      expect(calls).toEqual([]);
      await jest.advanceTimersByTimeAsync(1_000);
      expect(calls).toEqual(['first', 'third']);
      await jest.advanceTimersByTimeAsync(10_000);
      expect(calls).toEqual(['first', 'third']);
    });

    it('shares the queue with waits, each called back at its own deadline', async () => {
      const queue = deadlineQueue(5_000);
      const calls: string[] = [];
      const hanging = gate<string>();
      let outcome: unknown = 'pending';
      const t0 = performance.now();
      void queue.wait(hanging.promise, t0).then((value) => (outcome = value));
      const cancel = queue.after(t0, () => calls.push('cancelled'));
      queue.after(t0 + 1_000, () => calls.push('after'));
      cancel();
      await jest.advanceTimersByTimeAsync(5_000);
      expect([calls, outcome]).toEqual([[], TIMED_OUT]);
      // Re-armed from performance.now(), which fake timers leave real: up to 6 s more of them.
      await jest.advanceTimersByTimeAsync(6_000);
      expect(calls).toEqual(['after']);
      cancel(); // after it would have fired, or twice: nothing happens
      expect(calls).toEqual(['after']);
    });
  });

  // The inbox's enqueue waits this way: the wait and its `.then` in one promise. Each way the work
  // can end is handed to the one function it names, once, and a throw of that function is the
  // promise's rejection.
  describe('waitThen: the wait and its continuation in one promise', () => {
    const settled = (outcome: unknown) => ['settled', outcome === TIMED_OUT ? 'TIMED_OUT' : outcome];
    const failed = (error: unknown) => ['failed', error instanceof Error ? error.message : error];
    const cases: [string, () => Promise<unknown>, number, unknown[]][] = [
      ['a value before the deadline', () => Promise.resolve('queued'), 1_000, ['settled', 'queued']],
      ['a rejection before the deadline', () => Promise.reject(new Error('down')), 1_000, ['failed', 'down']],
      [
        'a value after the deadline',
        () => new Promise((resolve) => setTimeout(() => resolve('late'), 40)),
        5,
        ['settled', 'TIMED_OUT'],
      ],
      [
        'a rejection after the deadline (dropped unseen)',
        () => new Promise((_, reject) => setTimeout(() => reject(new Error('late')), 40)),
        5,
        ['settled', 'TIMED_OUT'],
      ],
      [
        'work that is no promise',
        () => undefined as unknown as Promise<unknown>,
        60_000,
        ['failed', expect.stringMatching(/then/) as unknown],
      ],
    ];
    it.each(cases)('%s: handed to the one function, once', async (_, work, timeoutMs, expected) => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const calls: unknown[] = [];
        const pending = work();
        const timers = refTimers();
        const answer = await deadlineQueue(timeoutMs).waitThen(
          pending,
          performance.now(),
          (outcome) => (calls.push('settled'), settled(outcome)),
          (error) => (calls.push('failed'), failed(error)),
        );
        expect(answer).toEqual(expected);
        expect(refTimers()).toBe(timers);
        // The late outcome, if any, comes and goes: neither function is called again.
        await new Promise((resolve) => setTimeout(resolve, 60));
        expect({ calls, unhandled }).toEqual({ calls: [expected[0]], unhandled: [] });
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
    });

    // The dispatcher frees an event in the continuation: called within waitThen's own call, it ran
    // before the event was held, and the event stayed held for good.
    it('calls failed for work that is no promise a turn later, never within the call', async () => {
      const calls: string[] = [];
      const waiting = deadlineQueue(60_000).waitThen(
        undefined as unknown as Promise<void>,
        performance.now(),
        () => calls.push('settled'),
        () => calls.push('failed'),
      );
      calls.push('returned');
      await waiting;
      expect(calls).toEqual(['returned', 'failed']);
    });

    it('rejects with what either function throws, and resolves as a promise either returns does', async () => {
      const queue = deadlineQueue(1_000);
      const bad = new Error('a broken continuation');
      const thrower = () => {
        throw bad;
      };
      await expect(queue.waitThen(Promise.resolve(1), performance.now(), thrower, failed)).rejects.toBe(bad);
      await expect(
        queue.waitThen(Promise.reject(new Error('down')), performance.now(), settled, thrower),
      ).rejects.toBe(bad);
      await expect(
        queue.waitThen(Promise.resolve(2), performance.now(), (n) => Promise.resolve(['later', n]), failed),
      ).resolves.toEqual(['later', 2]);
    });
  });

  it('holds the process open only while an after is pending', () => {
    const before = refTimers();
    const queue = deadlineQueue(10_000);
    const cancel = queue.after(performance.now(), () => undefined);
    expect(refTimers()).toBe(before + 1);
    cancel();
    expect(refTimers()).toBe(before);
    const again = queue.after(performance.now(), () => undefined);
    expect(refTimers()).toBe(before + 1);
    again();
    expect(refTimers()).toBe(before);
  });
});
