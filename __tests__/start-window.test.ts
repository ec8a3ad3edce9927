import { startWindow } from '../lib/inbox/worker-rate';

describe('startWindow, the per-worker rate of pg-boss', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  /** A wait that moves the clock, and what it was asked to wait. */
  function clock() {
    const waits: number[] = [];
    const wait = (ms: number) => {
      waits.push(ms);
      jest.advanceTimersByTime(ms);
      return Promise.resolve();
    };
    return { waits, wait };
  }

  it('holds max starts a window: the next waits until the oldest leaves it', async () => {
    const { waits, wait } = clock();
    const w = startWindow({ max: 2, perMs: 1000 });
    (await w.take(wait, () => false))?.started();
    jest.advanceTimersByTime(300);
    (await w.take(wait, () => false))?.started();
    expect(waits).toEqual([]);
    (await w.take(wait, () => false))?.started();
    // The first start was at 0: the third may start at 1000, 700 ms on.
    expect(waits).toEqual([700]);
    expect(Date.now()).toBe(1000);
  });

  it('gives back a hold no job used, so idle polls spend nothing', async () => {
    const { waits, wait } = clock();
    const w = startWindow({ max: 1, perMs: 1000 });
    for (let poll = 0; poll < 5; poll++) (await w.take(wait, () => false))?.unused();
    (await w.take(wait, () => false))?.started();
    expect(waits).toEqual([]);
  });

  it('counts a start from when its job came, not from when it was asked for', async () => {
    const { waits, wait } = clock();
    const w = startWindow({ max: 1, perMs: 1000 });
    const hold = await w.take(wait, () => false);
    jest.advanceTimersByTime(400); // the fetch
    hold?.started();
    await w.take(wait, () => false);
    expect(waits).toEqual([1000]);
  });

  it('resolves nothing once the worker stops, instead of waiting on', async () => {
    const { waits, wait } = clock();
    const w = startWindow({ max: 1, perMs: 1000 });
    (await w.take(wait, () => false))?.started();
    let stopping = false;
    const stopOnWait = (ms: number) => {
      stopping = true;
      return wait(ms);
    };
    expect(await w.take(stopOnWait, () => stopping)).toBeUndefined();
    expect(waits).toEqual([1000]);
  });
});
