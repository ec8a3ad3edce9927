/** At most this many retries, the first after this delay, each twice the last. */
const RETRIES = 6;
const FIRST_DELAY_MS = 250;

/**
 * Retries `attempt` in the background, spaced out, while the next try would still start within
 * `windowMs` of the first: the store bookkeeping that must land after an answer was already given.
 * Resolves with the number of the try that succeeded, or 0 when none did; never rejects.
 */
export async function retrySpaced(attempt: () => Promise<void>, windowMs: number): Promise<number> {
  const started = Date.now();
  let delay = FIRST_DELAY_MS;
  for (let n = 1; n <= RETRIES; n++) {
    if (Date.now() - started + delay > windowMs) break;
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay *= 2;
    try {
      await attempt();
      return n;
    } catch {
      // Tried again, or given up on after the loop.
    }
  }
  return 0;
}
