/*
 * RFC 3339 dates and date-times read by character codes, accepting exactly what DATE, DATETIME_LOCAL
 * and DATETIME_OFFSET (fast-event-data.ts, zod's own patterns) accept: a test holds them to it, by a
 * property over strings near a timestamp and by the patterns' tables. Three of these run a delivery
 * (the envelope's `time`, the data's two dates); the patterns' leap-year alternation cost more in V8's
 * regex engine than the whole walk below.
 */

/** The two ASCII digits at `i` as a number, or -1 when either is not a digit (`\d` without `u`). */
function twoDigits(text: string, i: number): number {
  const tens = text.charCodeAt(i) - 0x30;
  const ones = text.charCodeAt(i + 1) - 0x30;
  // Past the end charCodeAt is NaN, and NaN fails both comparisons.
  if (!(tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9)) return -1;
  return tens * 10 + ones;
}

/** `YYYY-MM-DD` in the first ten characters, a real Gregorian day (29 February in a leap year only). */
function dateAt(text: string): boolean {
  const century = twoDigits(text, 0);
  const year = twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  if (century < 0 || year < 0 || month < 1 || month > 12 || day < 1) return false;
  if (text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d) return false;
  if (month === 2) {
    // The year's last two digits divisible by 4, or 00 in a century divisible by 4: the pattern's rule.
    const leap = year === 0 ? century % 4 === 0 : year % 4 === 0;
    return day <= (leap ? 29 : 28);
  }
  return day <= (month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31);
}

/** `HH:MM` at `i`: hours 00-23, minutes 00-59. */
function hoursMinutesAt(text: string, i: number): boolean {
  const hours = twoDigits(text, i);
  const minutes = twoDigits(text, i + 3);
  return hours >= 0 && hours <= 23 && text.charCodeAt(i + 2) === 0x3a && minutes >= 0 && minutes <= 59;
}

/** DATE: `YYYY-MM-DD` and nothing else. */
export function isRfc3339Date(text: string): boolean {
  return text.length === 10 && dateAt(text);
}

/**
 * DATETIME_OFFSET (`localAllowed` false): `YYYY-MM-DDTHH:MM:SS`, a fraction of one or more digits or
 * none, then `Z` or `±HH:MM`. DATETIME_LOCAL (`localAllowed` true) also takes one without an offset,
 * and then the seconds (and the fraction with them) may be left out: `YYYY-MM-DDTHH:MM`.
 */
export function isRfc3339DateTime(text: string, localAllowed: boolean): boolean {
  const end = text.length;
  if (end < 16 || !dateAt(text) || text.charCodeAt(10) !== 0x54 || !hoursMinutesAt(text, 11)) return false;
  if (end === 16) return localAllowed;
  const seconds = twoDigits(text, 17);
  if (text.charCodeAt(16) !== 0x3a || seconds < 0 || seconds > 59) return false;
  let i = 19;
  if (text.charCodeAt(i) === 0x2e) {
    const first = ++i;
    while (i < end && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
    if (i === first) return false;
  }
  if (i === end) return localAllowed;
  const sign = text.charCodeAt(i);
  if (sign === 0x5a) return i + 1 === end;
  return (sign === 0x2b || sign === 0x2d) && i + 6 === end && hoursMinutesAt(text, i + 1);
}
