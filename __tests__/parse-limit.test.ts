import {
  createEventRouter,
  createNodeHandler,
  OptionsError,
  readCloudEvent,
  webhookReceiver,
} from 'service-webhooks';
import { parseLimit } from '../lib/core/event/parse-limit';

const ACCEPTED_FORMS = /positive whole number of bytes.*b, kb, mb, gb.*'512kb'.*'1mb'/;

describe('parseLimit', () => {
  // The sizes of issue 11 that used to be read as their leading digits, and other near misses.
  const bad: [string, unknown][] = [
    ['1m (the unit is mb)', '1m'],
    ['500k (the unit is kb)', '500k'],
    ['2 MiB (binary units are not bytes units)', '2 MiB'],
    ['1 megabyte (a word)', '1 megabyte'],
    ['1tb (only b, kb, mb, gb)', '1tb'],
    ['1e6 (exponent)', '1e6'],
    ['0x400 (hex)', '0x400'],
    ['1,024 (a thousands separator)', '1,024'],
    ['mb (no number)', 'mb'],
    ['-1mb (negative)', '-1mb'],
    ['+1mb (a sign)', '+1mb'],
    ['1mb1 (trailing text)', '1mb1'],
    ['the empty string', ''],
    ['spaces only', '   '],
    ['0', 0],
    ['"0"', '0'],
    ['0kb', '0kb'],
    ['-1', -1],
    ['1.5 (a fraction of a byte)', 1.5],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['2^53 (not a safe integer)', 2 ** 53],
    ['null', null],
    ['true', true],
    ['an object', { mb: 1 }],
    ['an array', ['1mb']],
  ];

  it.each(bad)('refuses %s with an OptionsError naming the accepted forms', (_name, limit) => {
    let thrown: unknown;
    try {
      parseLimit(limit, 'webhookReceiver');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(OptionsError);
    expect(thrown).toMatchObject({ code: 'ERR_SW_LIMIT' });
    expect((thrown as Error).message).toMatch(/^\[service-webhooks\] webhookReceiver: limit must be/);
    expect((thrown as Error).message).toMatch(ACCEPTED_FORMS);
    expect((thrown as Error).message).toContain(`(got ${JSON.stringify(limit)})`);
  });

  const good: [unknown, number][] = [
    [undefined, 1024 * 1024],
    [1, 1],
    [1024, 1024],
    ['1024', 1024],
    ['100b', 100],
    ['100 B', 100],
    ['1kb', 1024],
    ['500kb', 500 * 1024],
    ['500KB', 500 * 1024],
    ['1mb', 1024 * 1024],
    ['1Mb', 1024 * 1024],
    ['2 mb', 2 * 1024 * 1024],
    ['1.5mb', 1.5 * 1024 * 1024],
    ['0.5kb', 512],
    ['1gb', 1024 ** 3],
  ];

  it.each(good)('reads %p as %d bytes', (limit, expected) => {
    expect(parseLimit(limit, 'webhookReceiver')).toBe(expected);
  });

  // Spaces around a size once slipped past the pattern into bytes.parse, which read ' 1kb' as 1 byte.
  it.each([
    [' 1kb', 1024],
    ['1kb ', 1024],
    [' 2 mb ', 2 * 1024 * 1024],
  ])('reads %p, spaces around it, as %d bytes', (limit, expected) => {
    expect(parseLimit(limit, 'webhookReceiver')).toBe(expected);
  });

  // A fraction of a byte is refused, as the number 1.5 is (bytes.parse would read '1.5b' as 1).
  it.each([['1.5'], ['1.5b'], ['2.9 b']])('refuses %p, a fraction of a byte', (limit) => {
    expect(() => parseLimit(limit, 'webhookReceiver')).toThrow(OptionsError);
  });
});

describe('every factory that takes a limit reads it with parseLimit, at construction', () => {
  const router = createEventRouter();
  const factories: [string, (limit: unknown) => unknown][] = [
    ['webhookReceiver', (limit) => webhookReceiver({ bearerTokens: ['t'], router, limit } as never)],
    ['createNodeHandler', (limit) => createNodeHandler({ bearerTokens: ['t'], router, limit } as never)],
    ['readCloudEvent', (limit) => readCloudEvent({ limit } as never)],
  ];

  it.each(factories)('%s refuses limit "1m" naming itself', (name, build) => {
    expect(() => build('1m')).toThrow(new RegExp(`^\\[service-webhooks\\] ${name}: limit must be`));
    expect(() => build('1mb')).not.toThrow();
  });
});
