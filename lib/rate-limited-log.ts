import type { LogLevel, ResolvedLogger } from './logger';

/** Logs one line per reason per interval, with how many were held back since the last line. */
export type RateLimitedLog = (
  level: LogLevel,
  reason: string,
  meta: Record<string, unknown>,
  message: string,
) => void;

/**
 * A misconfigured token in production means a refusal per delivery: one line per reason per
 * `intervalMs` says so without flooding the log (or letting an attacker do it).
 */
export function rateLimitedLog(log: ResolvedLogger, intervalMs = 60_000): RateLimitedLog {
  const last = new Map<string, { at: number; held: number }>();
  return function rateLimited(level, reason, meta, message) {
    const now = Date.now();
    const seen = last.get(reason);
    if (seen !== undefined && now - seen.at < intervalMs) {
      seen.held++;
      return;
    }
    const held = seen?.held ?? 0;
    // Reasons are a fixed set of slugs, so the map stays small.
    last.set(reason, { at: now, held: 0 });
    log[level](held > 0 ? { ...meta, reason, suppressedSinceLast: held } : { ...meta, reason }, message);
  };
}
