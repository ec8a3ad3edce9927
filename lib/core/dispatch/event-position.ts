import type { EntityPosition } from '../../idempotency/entity-ordering-store';

/** RFC 3339 as the envelope check admits it (DATETIME_OFFSET): a date, a time, a fraction, an offset. */
const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:Z|([+-])(\d\d):(\d\d))$/;
/** Added to the epoch milliseconds so every year from 0000 to 9999 is positive: 16 digits at most. */
const SHIFT = 1e14;

/**
 * An event's `time` as 22 digits that sort as the instants do, whatever the offset or the number of
 * fractional digits it was written with: 16 of shifted epoch milliseconds, then 6 more digits of the
 * fraction (to the nanosecond; finer digits are dropped, the event id then breaks the tie).
 * Null for a time it cannot read; the envelope check lets none of those through.
 */
export function sortableTime(time: string): string | null {
  const m = RFC3339.exec(time);
  if (m === null) return null;
  const [, y, mo, d, h, mi, s, fraction = '', sign, oh, om] = m as unknown as string[];
  const date = new Date(0);
  // setUTCFullYear takes the year as written; Date.UTC would read 0099 as 1999.
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), Number(fraction.slice(0, 3).padEnd(3, '0')));
  const offsetMs = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
  const ms = date.getTime() - offsetMs;
  if (!Number.isFinite(ms)) return null;
  return sortableMs(ms) + fraction.slice(3, 9).padEnd(6, '0');
}

/** Epoch milliseconds as the first 16 digits of {@link sortableTime}. */
const sortableMs = (ms: number) => String(ms + SHIFT).padStart(16, '0');

/** An event's position, and whether its `time` lay past the latest instant allowed and was held there. */
export interface BoundedPosition extends EntityPosition {
  /** True when the event's `time` was later than `latestMs`: its position is `latestMs` instead. */
  future: boolean;
}

/**
 * The event's place in its entity's history, or null when it has no `time` to order by. A `time`
 * after `latestMs` (epoch milliseconds: when it was received, plus the allowed skew) counts as
 * `latestMs`: one event dated 9999 must not become the entity's newest for as long as the mark is kept.
 */
export function eventPosition(
  event: { id: string; time: string | null },
  latestMs = Number.POSITIVE_INFINITY,
): BoundedPosition | null {
  const time = event.time === null ? null : sortableTime(event.time);
  if (time === null) return null;
  // Both are fixed-width digits, so the texts compare as the instants do; a latest past the years
  // sortableTime can write (or not finite) bounds nothing.
  const latest = Number.isFinite(latestMs) ? sortableMs(Math.floor(latestMs)) + '999999' : undefined;
  if (latest === undefined || latest.length !== time.length || time <= latest)
    return { time, eventId: event.id, future: false };
  return { time: latest, eventId: event.id, future: true };
}
