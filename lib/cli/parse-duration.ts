import { UsageError } from './cli-errors';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** The longest `--since` and `--retry-window`: ten years, far past any queue's or the Service's. */
const LONGEST_DURATION = '87600h';

function milliseconds(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  return match === null ? undefined : Math.round(Number(match[1]) * (UNITS[match[2] ?? 'ms'] as number));
}

/**
 * `500ms`, `90s`, `30m`, `6h` (or a bare number of milliseconds) as milliseconds, at most `longest`
 * (a duration too): past it a date would be invalid, or a timer would fire at once.
 */
export function parseDuration(flag: string, text: string, longest = LONGEST_DURATION): number {
  const ms = milliseconds(text);
  if (ms === undefined)
    throw new UsageError(`${flag} must be a duration such as 500ms, 90s, 30m or 6h (got "${text}")`);
  if (!(ms <= (milliseconds(longest) as number)))
    throw new UsageError(`${flag} must be at most ${longest} (got "${text}")`);
  return ms;
}
