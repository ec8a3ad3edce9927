import { engineErrorLog } from '../lib/inbox/worker/engine-error-log';
import { resolveLogger } from '../lib/logger';
import { captureLogger } from './support/capture-logger';

function refused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
}

describe('engineErrorLog', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  function subject() {
    const logger = captureLogger();
    return { logger, log: engineErrorLog(resolveLogger(logger, 'test'), 'the engine', 60_000) };
  }

  it('logs the first error of a reason, counts the rest, and says how many in the next line', () => {
    const { logger, log } = subject();
    for (let i = 0; i <= 120; i++) {
      log.error(refused());
      jest.advanceTimersByTime(500);
    }
    const lines = logger.records.filter((r) => r.level === 'error');
    // Two a second for 60 s: one line at 0 s, one at 60 s with the 119 held back between.
    expect(lines.map((r) => [r.meta.reason, r.meta.suppressedSinceLast])).toEqual([
      ['ECONNREFUSED', undefined],
      ['ECONNREFUSED', 119],
    ]);
    expect(lines[0]?.message).toBe(
      '[service-webhooks] the engine reported an error and keeps retrying; more of the same are counted, not logged, for 60 s',
    );
    expect(lines[0]?.meta.err).toBeInstanceOf(Error);
  });

  it.each<[string, unknown, string]>([
    ['a code', refused(), 'ECONNREFUSED'],
    ['a name, without a code', Object.assign(new Error('x'), { name: 'ReplyError' }), 'ReplyError'],
    ['neither', { message: 'odd' }, 'error'],
    ['not an object', undefined, 'error'],
  ])('keeps reasons apart by %s', (_what, error, reason) => {
    const { logger, log } = subject();
    log.error(error);
    log.error(error);
    expect(logger.records.map((r) => r.meta.reason)).toEqual([reason]);
  });

  it('logs each new reason at once, and folds reasons past twenty into one', () => {
    const { logger, log } = subject();
    for (let i = 0; i < 30; i++) log.error(Object.assign(new Error('x'), { code: `E${i}` }));
    const reasons = logger.records.map((r) => r.meta.reason);
    expect(reasons).toHaveLength(21);
    expect(reasons.at(-1)).toBe('other');
  });

  it('says once that it is connected again, with the count, however many connections come back', () => {
    const { logger, log } = subject();
    log.connected();
    expect(logger.records).toEqual([]);
    for (let i = 0; i < 5; i++) log.error(refused());
    log.connected();
    // A second connection fails once more, then is back too: counted, and no second line.
    log.error(refused());
    log.connected();
    const warnings = () => logger.records.filter((r) => r.level === 'warn');
    expect(warnings().map((r) => [r.message, r.meta.errors])).toEqual([
      ['[service-webhooks] the engine is connected again', 5],
    ]);
    expect(logger.records.filter((r) => r.level === 'error')).toHaveLength(1);
    // The next outage a minute on is logged at once, and its end told with what was held back.
    jest.advanceTimersByTime(60_000);
    log.error(refused());
    log.connected();
    expect(logger.records.filter((r) => r.level === 'error').map((r) => r.meta.suppressedSinceLast)).toEqual([
      undefined,
      5, // the 4 after the first line, and the second connection's
    ]);
    expect(warnings().map((r) => r.meta.errors)).toEqual([5, 2]);
  });
});
