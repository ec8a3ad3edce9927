/** A call that did not settle within its bound. */
export class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`[service-webhooks] ${what} did not settle within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * Settles with `promise`, or rejects with a TimeoutError after `ms`. A late outcome is observed (never
 * an unhandled rejection); a late success goes to `late`, so the caller can undo what it no longer
 * waits for.
 */
export function withTimeout<T>(
  promise: PromiseLike<T>,
  ms: number,
  what: string,
  late?: (value: T) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reject(new TimeoutError(what, ms));
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        if (timedOut) late?.(value);
        else resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
