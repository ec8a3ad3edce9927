import { RetryLater } from './retry-later';

/**
 * Thrown by a handler whose downstream is throttling (a partner API answered 429): a `RetryLater`
 * that holds back more than its own event. On the sync path it is answered as `RetryLater` is (503
 * with `Retry-After`). Behind an inbox the whole queue waits `retryAfterSeconds` (BullMQ: every worker
 * of the queue, in Redis; pg-boss: every worker of the queue in this process), and the event is put
 * back without spending one of its attempts, so a partner's 429 does not burn every job's tries.
 */
export class RateLimited extends RetryLater {
  constructor(
    message = 'the downstream is throttling: the handler asked the queue to wait',
    options: { retryAfterSeconds?: number } = {},
  ) {
    super(message, options);
    this.name = 'RateLimited';
  }
}
