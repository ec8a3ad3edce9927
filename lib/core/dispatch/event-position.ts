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
  return String(ms + SHIFT).padStart(16, '0') + fraction.slice(3, 9).padEnd(6, '0');
}

/** The event's place in its entity's history, or null when it has no `time` to order by. */
export function eventPosition(event: { id: string; time: string | null }): EntityPosition | null {
  const time = event.time === null ? null : sortableTime(event.time);
  return time === null ? null : { time, eventId: event.id };
}
