import { UsageError } from './cli-errors';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `500ms`, `90s`, `30m`, `6h` (or a bare number of milliseconds) as milliseconds. */
export function parseDuration(flag: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (match === null) {
    throw new UsageError(`${flag} must be a duration such as 500ms, 90s, 30m or 6h (got "${text}")`);
  }
  return Math.round(Number(match[1]) * (UNITS[match[2] ?? 'ms'] as number));
}
