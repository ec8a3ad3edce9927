import { MINUTES, TriesPerMinute } from '../lib/inbox-console/tries-per-minute';
import { triesChart } from '../lib/inbox-console/tries-chart';

const T = Date.parse('2026-11-26T10:00:00.000Z');
const MIN = 60_000;

describe('TriesPerMinute', () => {
  it('counts each try in its minute by outcome, the last hour only, oldest first', () => {
    const tries = new TriesPerMinute();
    expect(tries.wired).toBe(false);
    tries.record('processed', T);
    tries.record('duplicate', T + 10);
    tries.record('retry', T + 20);
    tries.record('dead', T + 5 * MIN);
    tries.record('stale', T + 5 * MIN + 59_999);
    expect(tries.wired).toBe(true);
    const hour = tries.lastHour(T + 5 * MIN + 1);
    expect(hour).toHaveLength(MINUTES);
    expect(hour.at(-1)).toEqual({ at: T + 5 * MIN, processed: 1, retried: 0, dead: 1 });
    expect(hour.at(-6)).toEqual({ at: T, processed: 2, retried: 1, dead: 0 });
    expect(hour.reduce((n, m) => n + m.processed + m.retried + m.dead, 0)).toBe(5);
    // An hour later the slots are reused, not read as this hour's.
    const later = tries.lastHour(T + 64 * MIN);
    expect(later.reduce((n, m) => n + m.processed + m.retried + m.dead, 0)).toBe(2);
    tries.record('retry', T + 60 * MIN);
    expect(tries.lastHour(T + 60 * MIN).at(-1)).toEqual({
      at: T + 60 * MIN,
      processed: 0,
      retried: 1,
      dead: 0,
    });
  });

  it('draws one stacked bar per minute with tries, and says the hour in words', () => {
    const tries = new TriesPerMinute();
    tries.record('processed', T);
    tries.record('processed', T);
    tries.record('dead', T);
    const svg = triesChart(tries.lastHour(T));
    expect(svg.match(/<rect [^>]*fill="#15803d"/g)).toHaveLength(1);
    expect(svg.match(/<rect [^>]*fill="#b91c1c"/g)).toHaveLength(1);
    expect(svg).toContain(
      'aria-label="Tries per minute, last hour: 2 processed, 0 retried, 1 dead; the busiest minute had 3."',
    );
    expect(triesChart(new TriesPerMinute().lastHour(T))).toContain(
      '0 processed, 0 retried, 0 dead; the busiest minute had 0.',
    );
  });
});
