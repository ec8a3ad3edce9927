import fc from 'fast-check';
import { eventPosition, sortableTime } from '../lib/core/dispatch/event-position';

const SEED = Number(process.env.PROPERTY_SEED ?? 20261124);

describe('sortableTime', () => {
  it.each([
    ['2026-11-24T10:00:00Z', '2026-11-24T11:00:00+01:00'],
    ['2026-11-24T10:00:00Z', '2026-11-24T10:00:00.000000000Z'],
    ['2026-11-24T23:30:00-01:00', '2026-11-25T00:30:00Z'],
    ['2026-11-24T10:00:00.1Z', '2026-11-24T10:00:00.100Z'],
  ])('writes %s and %s, one instant, alike', (a, b) => {
    expect(sortableTime(a)).toBe(sortableTime(b));
  });

  it.each([
    ['2026-11-24T10:00:00.0004999Z', '2026-11-24T10:00:00.0005Z'],
    ['2026-11-24T10:00:00.999999999Z', '2026-11-24T10:00:01Z'],
    ['0099-01-01T00:00:00Z', '1999-01-01T00:00:00Z'],
    ['0000-01-01T00:00:00+23:59', '9999-12-31T23:59:59.999999999-23:59'],
    ['2026-11-24T10:00:00+01:00', '2026-11-24T10:00:00Z'],
  ])('puts %s before %s', (earlier, later) => {
    expect((sortableTime(earlier) as string) < (sortableTime(later) as string)).toBe(true);
    expect(sortableTime(earlier)).toHaveLength(22);
  });

  it.each(['', 'yesterday', '2026-11-24', '2026-11-24T10:00:00', '2026-11-24 10:00:00Z'])(
    'reads nothing from %j',
    (time) => expect(sortableTime(time)).toBeNull(),
  );

  it(`sorts as the instants do, to the microsecond, for any time and offset (seed ${SEED})`, () => {
    const instant = fc.record({
      ms: fc.integer({ min: -62_000_000_000_000, max: 253_000_000_000_000 }),
      micro: fc.integer({ min: 0, max: 999 }),
      offset: fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
    });
    const write = ({ ms, micro, offset }: { ms: number; micro: number; offset: number }) => {
      const local = new Date(ms + offset * 60_000).toISOString().slice(0, 23);
      const sign = offset < 0 ? '-' : '+';
      const abs = Math.abs(offset);
      const hh = String(Math.floor(abs / 60)).padStart(2, '0');
      const mm = String(abs % 60).padStart(2, '0');
      return `${local}${String(micro).padStart(3, '0')}${sign}${hh}:${mm}`;
    };
    // Local times from year 0000 to 9999 only: what RFC 3339 can write.
    const writable = (t: { ms: number; offset: number }) =>
      t.ms + t.offset * 60_000 >= -62_167_219_200_000 && t.ms + t.offset * 60_000 <= 253_402_300_799_999;
    const sign = (n: number) => (n === 0 ? 0 : n < 0 ? -1 : 1);
    fc.assert(
      fc.property(instant, instant, (a, b) => {
        fc.pre(writable(a) && writable(b));
        const [x, y] = [sortableTime(write(a)), sortableTime(write(b))] as [string, string];
        expect(x === y ? 0 : x < y ? -1 : 1).toBe(sign(a.ms - b.ms) || sign(a.micro - b.micro));
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });
});

describe('eventPosition', () => {
  it('is the sortable time and the id, or null without a time', () => {
    expect(eventPosition({ id: 'e1', time: '2026-11-24T10:00:00Z' })).toEqual({
      time: sortableTime('2026-11-24T10:00:00Z'),
      eventId: 'e1',
      future: false,
    });
    expect(eventPosition({ id: 'e1', time: null })).toBeNull();
  });

  const latest = Date.parse('2026-11-24T10:05:00Z');
  it.each([
    ['9999-12-31T23:59:59.999999999Z', true],
    ['2026-11-24T10:05:00.001Z', true],
    ['2026-11-24T11:05:00.001+01:00', true],
    ['2026-11-24T10:05:00.000999Z', false],
    ['2026-11-24T10:05:00Z', false],
    ['2026-11-24T11:04:59+01:00', false],
    ['0001-01-01T00:00:00Z', false],
  ])('holds %s at the latest instant allowed: %s', (time, future) => {
    const position = eventPosition({ id: 'e1', time }, latest);
    const held = sortableTime('2026-11-24T10:05:00.000999999Z');
    expect(position).toEqual({ time: future ? held : sortableTime(time), eventId: 'e1', future });
  });

  it.each([Number.POSITIVE_INFINITY, Number.NaN, 1e20])('bounds nothing with a latest of %s', (bound) => {
    expect(eventPosition({ id: 'e1', time: '9999-12-31T23:59:59Z' }, bound)).toMatchObject({
      time: sortableTime('9999-12-31T23:59:59Z'),
      future: false,
    });
  });
});
