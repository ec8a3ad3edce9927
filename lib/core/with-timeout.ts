/** A call that did not settle within its bound. */
export class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`[service-webhooks] ${what} did not settle within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * Settles with `promise`, or rejects with a TimeoutError after `ms`. The late outcome of `promise` is
 * observed and dropped, so a call that rejects after its bound is never an unhandled rejection.
 */
export function withTimeout<T>(promise: PromiseLike<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TimeoutError(what, ms)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
