import { EventEmitter } from 'node:events';
import type { DeliveryEnvelope } from '../events/build-event';
import type { AttemptRecord, EmulatedDelivery, EmulatedWebhook } from './emulator-types';
import { ConcurrencyLimit } from './concurrency-limit';
import type { EmulatorTls } from './emulator-tls';
import { postDelivery } from './outbound';

export interface RetryPolicy {
  /** How long after its first attempt a delivery is retried, then dropped. */
  retryWindowMs: number;
  /** The wait before the second attempt; it doubles each time. */
  initialBackoffMs: number;
  /** The longest wait between two attempts. */
  maxBackoffMs: number;
  /** How long one attempt may take before it counts as failed. */
  attemptTimeoutMs: number;
  /** Source of jitter, in [0, 1). */
  random: () => number;
  /** Attempts in flight at once, across webhooks; the others wait their turn. */
  maxConcurrentDeliveries: number;
  /** Trust and client certificate for https:// webhooks; without it they go through fetch. */
  tls?: EmulatorTls;
}

const ACKNOWLEDGED = new Set([200, 201]);
/**
 * Records kept: an emulator left running for days forgets its oldest attempts and settled deliveries
 * (pending ones are always kept) instead of growing without bound.
 */
const KEPT_RECORDS = 10_000;

/**
 * Delivers events as the Service does (spec 6, rules 6–7): 200 or 201 ends a delivery; anything else,
 * a timeout or a refused connection is retried with exponential backoff and jitter until the retry
 * window ends, then dropped. Emits `'sending'`, `'attempt'` and `'settled'`.
 */
export class DeliveryScheduler extends EventEmitter {
  readonly attempts: AttemptRecord[] = [];
  readonly deliveries: EmulatedDelivery[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #running = new Set<Promise<void>>();
  readonly #limit: ConcurrencyLimit;
  #closed = false;

  constructor(
    private readonly policy: RetryPolicy,
    private readonly lookup: (webhookId: string) => EmulatedWebhook | undefined,
  ) {
    super();
    this.#limit = new ConcurrencyLimit(policy.maxConcurrentDeliveries);
  }

  get pending(): number {
    return this.deliveries.filter((d) => d.state === 'pending').length;
  }

  start(webhook: EmulatedWebhook, envelope: DeliveryEnvelope): EmulatedDelivery {
    const delivery: EmulatedDelivery = {
      eventId: envelope.id,
      type: envelope.type,
      webhookId: webhook.id,
      state: 'pending',
      attempts: 0,
      envelope,
    };
    this.deliveries.push(delivery);
    if (this.deliveries.length > KEPT_RECORDS) {
      const oldestSettled = this.deliveries.findIndex((d) => d.state !== 'pending');
      if (oldestSettled >= 0) this.deliveries.splice(oldestSettled, 1);
    }
    this.#attempt(delivery, Date.now());
    return delivery;
  }

  /** The wait before attempt `n + 1`: exponential, capped, with "equal jitter" so retries spread out. */
  backoff(attempt: number): number {
    const { initialBackoffMs, maxBackoffMs, random } = this.policy;
    const base = Math.min(maxBackoffMs, initialBackoffMs * 2 ** (attempt - 1));
    return base / 2 + (random() * base) / 2;
  }

  close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#limit.releaseAll();
    return Promise.allSettled([...this.#running]).then(() => undefined);
  }

  #attempt(delivery: EmulatedDelivery, firstAt: number): void {
    const run = this.#run(delivery, firstAt);
    this.#running.add(run);
    void run.finally(() => this.#running.delete(run));
  }

  async #run(delivery: EmulatedDelivery, firstAt: number): Promise<void> {
    await this.#limit.acquire();
    try {
      await this.#attemptOnce(delivery, firstAt);
    } finally {
      this.#limit.release();
    }
  }

  async #attemptOnce(delivery: EmulatedDelivery, firstAt: number): Promise<void> {
    const webhook = this.lookup(delivery.webhookId);
    if (this.#closed) return;
    if (webhook === undefined) return this.#settle(delivery, 'dropped');
    delivery.attempts++;
    this.emit('sending', { delivery, url: webhook.url });
    const started = Date.now();
    const result = await postDelivery(
      webhook,
      delivery.envelope,
      this.policy.attemptTimeoutMs,
      this.policy.tls,
    );
    const acknowledged = result.status !== null && ACKNOWLEDGED.has(result.status);
    const wait = this.backoff(delivery.attempts);
    const retry = !acknowledged && !this.#closed && Date.now() + wait - firstAt <= this.policy.retryWindowMs;
    const record: AttemptRecord = {
      eventId: delivery.eventId,
      type: delivery.type,
      webhookId: delivery.webhookId,
      url: webhook.url,
      attempt: delivery.attempts,
      status: result.status,
      error: result.error,
      at: new Date(started).toISOString(),
      durationMs: Date.now() - started,
      outcome: acknowledged ? 'acknowledged' : retry ? 'retrying' : 'dropped',
      requestHeaders: result.requestHeaders,
      responseHeaders: result.headers,
      responseBody: result.text,
    };
    this.attempts.push(record);
    if (this.attempts.length > KEPT_RECORDS) this.attempts.shift();
    this.emit('attempt', record);
    if (acknowledged) return this.#settle(delivery, 'acknowledged');
    if (!retry) return this.#settle(delivery, 'dropped');
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#attempt(delivery, firstAt);
    }, wait);
    this.#timers.add(timer);
  }

  #settle(delivery: EmulatedDelivery, state: 'acknowledged' | 'dropped'): void {
    delivery.state = state;
    this.emit('settled', delivery);
  }
}
