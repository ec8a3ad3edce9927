import { createEventRouter } from '../lib';
import { inboxWorkerCore } from '../lib/inbox/worker/inbox-worker-core';
import { checkWorkerRate } from '../lib/inbox/worker-rate';
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
