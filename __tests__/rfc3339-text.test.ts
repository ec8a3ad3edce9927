import fc from 'fast-check';
import { DATE, DATETIME_LOCAL, DATETIME_OFFSET } from '../lib/events/fast-event-data';
import { isRfc3339Date, isRfc3339DateTime } from '../lib/events/rfc3339-text';

// The character-code checks against the patterns they replace (zod's own, which fast-paths.test.ts
// holds DATE, DATETIME_LOCAL and DATETIME_OFFSET to): the same answer for every string tried.
const SEED = Number(process.env.PROPERTY_SEED ?? 20261126);
const RUNS = 20_000;

const CHECKS = [
  ['DATE', DATE, (text: string) => isRfc3339Date(text)],
  ['DATETIME_LOCAL', DATETIME_LOCAL, (text: string) => isRfc3339DateTime(text, true)],
  ['DATETIME_OFFSET', DATETIME_OFFSET, (text: string) => isRfc3339DateTime(text, false)],
] as const;

const expectSame = (text: string) => {
  for (const [name, pattern, check] of CHECKS) {
    const got = check(text);
    if (got !== pattern.test(text)) throw new Error(`${name} on ${JSON.stringify(text)}: ours ${got}`);
  }
};

describe('RFC 3339 dates read by character codes', () => {
  it.each([
    // Each form, and each one's edges.
    ['2026-11-26', [true, false, false]],
    ['2026-11-26T16:30:39.287Z', [false, true, true]],
    ['2026-11-26T16:30:39Z', [false, true, true]],
    ['2026-11-26T16:30:39+01:00', [false, true, true]],
    ['2026-11-26T16:30:39.1-23:59', [false, true, true]],
    ['2026-11-26T16:30:39', [false, true, false]],
    ['2026-11-26T16:30:39.5', [false, true, false]],
    ['2026-11-26T16:30', [false, true, false]],
    ['2026-11-26T16:30Z', [false, false, false]],
    ['2026-11-26T16:30.5', [false, false, false]],
    ['2026-11-26T16:30:39.Z', [false, false, false]],
    ['2026-11-26T16:30:39.', [false, false, false]],
    ['2026-11-26T16:30:39+24:00', [false, false, false]],
    ['2026-11-26T16:30:39+01:60', [false, false, false]],
    ['2026-11-26T16:30:39+0100', [false, false, false]],
    ['2026-11-26T16:30:39+01:00Z', [false, false, false]],
    ['2026-11-26T16:30:39ZZ', [false, false, false]],
    ['2026-11-26T16:30:39z', [false, false, false]],
    ['2026-11-26t16:30:39Z', [false, false, false]],
    ['2026-11-26 16:30:39Z', [false, false, false]],
    ['2026-11-26T24:00:00Z', [false, false, false]],
    ['2026-11-26T23:60:00Z', [false, false, false]],
    ['2026-11-26T23:59:60Z', [false, false, false]],
    ['2026-11-26T23:59:59Z\n', [false, false, false]],
    ['2026-11-26\n', [false, false, false]],
    // Days and months, and 29 February by the pattern's leap rule.
    ['2024-02-29', [true, false, false]],
    ['2026-02-29', [false, false, false]],
    ['2000-02-29', [true, false, false]],
    ['1900-02-29', [false, false, false]],
    ['0000-02-29', [true, false, false]],
    ['2026-02-28', [true, false, false]],
    ['2026-04-31', [false, false, false]],
    ['2026-12-31', [true, false, false]],
    ['2026-00-10', [false, false, false]],
    ['2026-13-10', [false, false, false]],
    ['2026-01-00', [false, false, false]],
    ['2026-1-10', [false, false, false]],
    ['２026-11-26', [false, false, false]],
    ['', [false, false, false]],
  ] as const)('reads %j as the patterns do', (text, expected) => {
    expect(CHECKS.map(([, , check]) => check(text))).toEqual(expected);
    expect(CHECKS.map(([, pattern]) => pattern.test(text))).toEqual(expected);
  });

  it('takes every day of every month of years 0000 to 9999 as the patterns do', () => {
    for (let year = 0; year <= 9999; year++) {
      const y = String(year).padStart(4, '0');
      for (const md of ['02-28', '02-29', '02-30', '04-30', '04-31', '01-31', '01-32'])
        expectSame(`${y}-${md}`);
    }
    for (let month = 0; month <= 99; month++)
      for (let day = 0; day <= 99; day++) {
        const md = `${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
        expectSame(`2024-${md}`);
        expectSame(`2026-${md}T00:00:00Z`);
      }
  });

  it(`answers as the patterns do for strings near a timestamp (seed ${SEED})`, () => {
    const digit = fc.constantFrom(...'0123456789');
    const near = fc.constantFrom(...'0123456789-:T.Z+tz /\n\u0660９');
    const piece = (length: number) =>
      fc.oneof(
        { weight: 6, arbitrary: fc.string({ unit: digit, minLength: length, maxLength: length }) },
        { weight: 1, arbitrary: fc.string({ unit: near, minLength: 0, maxLength: length + 1 }) },
      );
    const sep = (c: string) =>
      fc.oneof({ weight: 8, arbitrary: fc.constant(c) }, { weight: 1, arbitrary: near });
    const stamp = fc
      .tuple(
        piece(4),
        sep('-'),
        piece(2),
        sep('-'),
        piece(2),
        fc.option(
          fc.tuple(
            sep('T'),
            piece(2),
            sep(':'),
            piece(2),
            fc.option(fc.tuple(sep(':'), piece(2))),
            fc.option(fc.tuple(sep('.'), fc.string({ unit: near, minLength: 0, maxLength: 4 }))),
            fc.option(fc.oneof(sep('Z'), fc.tuple(fc.constantFrom('+', '-'), piece(2), sep(':'), piece(2)))),
          ),
        ),
      )
      .map((parts) =>
        parts
          .flat(4)
          .filter((p) => p !== null)
          .join(''),
      );
    const anyNear = fc.string({ unit: near, minLength: 0, maxLength: 32 });
    fc.assert(
      fc.property(fc.oneof({ weight: 5, arbitrary: stamp }, { weight: 1, arbitrary: anyNear }), (text) => {
        expectSame(text);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
