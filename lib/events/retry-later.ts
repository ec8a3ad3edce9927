/**
 * Thrown by a handler that cannot process an event now but wants it again (a dependency is down, a
 * rate limit was hit): the delivery is answered 503 with `Retry-After`, the event is not marked done,
 * and the Service retries it. Any other error is answered 500; the Service retries that too.
 */
export class RetryLater extends Error {
  /** Seconds sent in `Retry-After`; `undefined` uses the receiver's `retryAfterSeconds`. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    message = 'the handler asked for the event to be retried later',
    options: { retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = 'RetryLater';
    const seconds = options.retryAfterSeconds;
    this.retryAfterSeconds =
      seconds !== undefined && Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : undefined;
  }
}
