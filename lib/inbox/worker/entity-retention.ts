import { DEAD_LETTER_RETENTION_MS } from '../dead-letter-retention';
import { OptionsError } from '../../options-error';
import { RETRY_WINDOW_MS } from '../../core/dispatch/dispatch-options';

/** The backoff is asked about this many tries at most; later ones are taken as long as the longest. */
const ASKED = 1000;

/**
 * How long an event's tries can last, from its first try to its dead letter: every try's bound and
 * every delay between tries. A handler's `RetryLater` and a busy entity's put-backs can stretch it
 * further, which is why the default keeps marks for the dead letters' lifetime on top of it.
 */
export function triesSpanMs(
  attempts: number,
  timeoutMs: number,
  backoff: (attempt: number) => number,
  where: string,
): number {
  let delays = 0;
  let longest = 0;
  for (let attempt = 1; attempt < Math.min(attempts, ASKED + 1); attempt++) {
    let delay: number;
    try {
      delay = backoff(attempt);
    } catch (error) {
      // The user's backoff is asked here first: say whose function failed, not only what it threw.
      throw new OptionsError(
        'ERR_SW_OPTION',
        where,
        `backoff threw for attempt ${attempt} (${error instanceof Error ? error.message : String(error)}): it must return a delay in ms for every attempt from 1 to attempts − 1`,
      );
    }
    delays += delay;
    longest = Math.max(longest, delay);
  }
  if (attempts > ASKED + 1) delays += (attempts - ASKED - 1) * longest;
  return Math.min(Number.MAX_SAFE_INTEGER, attempts * timeoutMs + delays);
}

/**
 * How long the worker keeps an entity's newest mark (ordered handlers). An older event can reach the
 * queue up to the Service's retry window after a newer one succeeded (the receiver failed meanwhile),
 * then take all its tries: a value below that reach is refused, since ordinary retries would outlive
 * the marks. The default adds the dead letters' lifetime, so a replay is still judged by them.
 */
export function entityRetention(value: unknown, triesMs: number, where: string): number {
  const reach = Math.min(Number.MAX_SAFE_INTEGER, RETRY_WINDOW_MS + triesMs);
  if (value === undefined) return Math.min(Number.MAX_SAFE_INTEGER, reach + DEAD_LETTER_RETENTION_MS);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < reach) {
    const hours = (reach / 3_600_000).toFixed(1);
    throw new OptionsError(
      'ERR_SW_TIMEOUT',
      where,
      `entityRetentionMs must be a whole number of milliseconds ≥ ${reach} (${hours} h: the Service's retry window and a margin, 7 h, then a job's tries, attempts × timeoutMs plus the backoff), or an older event's retry could run its ordered handlers after a newer one succeeded (got ${String(value)}). Leave it out for the default, that plus 90 days for dead letters`,
    );
  }
  return value;
}

/** `idempotency: { entityRetentionMs }` points to the worker's own option, not to `retentionMs`. */
export function checkEntityRetentionPlace(idempotency: unknown, where: string): void {
  if (typeof idempotency === 'object' && idempotency !== null && 'entityRetentionMs' in idempotency)
    throw new OptionsError(
      'ERR_SW_OPTION',
      `${where} idempotency`,
      'entityRetentionMs is an option of the worker itself: did you mean startWorker(router, { entityRetentionMs })?',
    );
}
