import { createEventRouter } from '../lib';
import { inboxWorkerCore } from '../lib/inbox/worker/inbox-worker-core';
import { checkWorkerRate, startWindow } from '../lib/inbox/worker-rate';
import { OptionsError } from '../lib/options-error';
import { openTelemetryTracing } from '../lib/observability/open-telemetry-tracing';

describe('the worker option rate', () => {
  it.each([
    ['a number', 50, /rate must be \{ max, perMs \}/],
    ['null', null, /rate must be \{ max, perMs \}/],
    ['no max', { perMs: 1000 }, /rate\.max must be a whole number ≥ 1 \(got undefined\)/],
    ['max 0', { max: 0, perMs: 1000 }, /rate\.max must be a whole number ≥ 1 \(got 0\)/],
    ['max 1.5', { max: 1.5, perMs: 1000 }, /rate\.max must be a whole number ≥ 1/],
    ['perMs as text', { max: 5, perMs: '1s' }, /rate\.perMs must be a whole number ≥ 1 \(got 1s\)/],
    ['perMs Infinity', { max: 5, perMs: Infinity }, /rate\.perMs must be a whole number ≥ 1/],
    ['a misspelt key', { max: 5, perMS: 1000 }, /unknown option "perMS"; did you mean "perMs"\?/],
  ])('refuses %s at start, saying what to give', (_name, rate, message) => {
    const start = () =>
      inboxWorkerCore(
        createEventRouter(),
        { rate, logger: false } as never,
        'inbox.startWorker',
        openTelemetryTracing,
      );
    expect(start).toThrow(OptionsError);
    expect(start).toThrow(message);
    expect(start).toThrow(/^\[service-webhooks\] inbox\.startWorker/);
  });

  it('is none by default, and given, is what the worker bounds its starts by', () => {
    expect(checkWorkerRate(undefined, 'w')).toBeUndefined();
    expect(checkWorkerRate({ max: 50, perMs: 1000 }, 'w')).toEqual({ max: 50, perMs: 1000 });
    const core = inboxWorkerCore(
      createEventRouter(),
      { rate: { max: 3, perMs: 10 }, logger: false },
      'inbox.startWorker',
      openTelemetryTracing,
    );
    expect(core.rate).toEqual({ max: 3, perMs: 10 });
  });
});

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
