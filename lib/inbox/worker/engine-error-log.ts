import type { ResolvedLogger } from '../../logger';

/** What a queue engine's worker reports to {@link engineErrorLog}. */
export interface EngineErrorLog {
  /** An error the engine reported (its `error` event): logged first, then counted. */
  error(error: unknown): void;
  /** The engine is connected (again): logged once after error lines, with how many errors there were. */
  connected(): void;
}

/** Distinct reasons kept apart; past this, further ones share one. */
const MAX_REASONS = 20;

function reasonOf(error: unknown): string {
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  if (typeof code === 'string' && code !== '') return code;
  return typeof name === 'string' && name !== '' ? name : 'error';
}

/**
 * An engine whose server is away reports every reconnection try (BullMQ's worker about twice a
 * second): one line per reason (the error's code, else its name) per `intervalMs` says so, the next
 * one carries how many were held back (`suppressedSinceLast`), and one line says when it is
 * connected again, with how many errors there were. Engine-neutral: a worker calls `error` from its
 * engine's `error` event and `connected` when its connection is ready again. `what` names the
 * source in each line (`'the BullMQ worker'`).
 */
export function engineErrorLog(log: ResolvedLogger, what: string, intervalMs = 60_000): EngineErrorLog {
  const reasons = new Map<string, { at: number; held: number }>();
  let sinceConnected = 0;
  // Whether an error line went out since the last "connected" line: only then is one owed.
  let told = false;
  return {
    error(error) {
      sinceConnected++;
      const own = reasonOf(error);
      const reason = reasons.has(own) || reasons.size < MAX_REASONS ? own : 'other';
      const now = Date.now();
      const seen = reasons.get(reason);
      if (seen !== undefined && now - seen.at < intervalMs) {
        seen.held++;
        return;
      }
      reasons.set(reason, { at: now, held: 0 });
      told = true;
      const held = seen?.held ?? 0;
      log.error(
        { err: error, reason, ...(held > 0 ? { suppressedSinceLast: held } : {}) },
        `${what} reported an error and keeps retrying; more of the same are counted, not logged, for ${Math.round(intervalMs / 1000)} s`,
      );
    },
    connected() {
      if (!told) return;
      // At a level the console logger prints: whoever saw the errors sees them end.
      log.warn({ errors: sinceConnected }, `${what} is connected again`);
      sinceConnected = 0;
      told = false;
      // The reasons keep their times: an engine with two connections reports the second one's
      // last failures after the first is back, and a flapping server stays at a line a minute.
    },
  };
}
