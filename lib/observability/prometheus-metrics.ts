import { Counter, Gauge, Histogram, register, type Registry } from 'prom-client';
import { checkOptionKeys } from '../check-option-keys';
import type { DeliveryListener, DeliveryRecord, HandlerRun } from '../core/delivery-record';
import type { BookkeepingEvent } from '../idempotency/bookkeeping-event';
import { OptionsError } from '../options-error';
import { typeLabel } from './type-label';

/** Options of {@link prometheusMetrics}. */
export interface PrometheusMetricsOptions {
  /** The prom-client registry the metrics are registered in. Defaults to prom-client's global `register`. */
  registry?: Registry;
  /** Prepended to every metric name. Defaults to `'service_webhooks_'`. */
  prefix?: string;
  /**
   * Upper bounds, in seconds, of the handler duration histogram's buckets; keep some near your
   * `timeoutMs`. Defaults to `[0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]`.
   */
  buckets?: readonly number[];
}

/** An `onDelivery` for every adapter; its `onRequestStart` keeps `requests_in_flight` (the receiver calls it). */
export type PrometheusMetrics = DeliveryListener & {
  /** Counts a request in `service_webhooks_requests_in_flight` as it enters the receiver. */
  onRequestStart(): void;
  /** Counts what the store's bookkeeping did in `service_webhooks_store_bookkeeping_total`. */
  onBookkeeping(event: BookkeepingEvent): void;
};

interface Metrics {
  deliveries: Counter<'type' | 'outcome'>;
  problems: Counter<'problem'>;
  handlerSeconds: Histogram<'type' | 'outcome' | 'handler'>;
  handlerRuns: Counter<'handler' | 'outcome'>;
  inFlight: Gauge;
  storeErrors: Counter;
  bookkeeping: Counter<'event'>;
  ordering: Counter<'type' | 'decision'>;
  futureTime: Counter;
  shed: Counter<'reason'>;
}

const KEYS = ['registry', 'prefix', 'buckets'];
const NO_RUNS: readonly HandlerRun[] = [];
const WHERE = 'prometheusMetrics';
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** Problem slugs are the library's own, but a label is a label: anything unexpected is `other`. */
const SLUG = /^[a-z][a-z0-9-]{0,47}$/;
/** Receivers sharing a registry and prefix share its metrics (registering a name twice throws). */
const shared = new WeakMap<Registry, Map<string, Metrics>>();

function checkOptions(options: PrometheusMetricsOptions): void {
  checkOptionKeys(options, KEYS, WHERE);
  const { registry, prefix, buckets } = options;
  if (registry !== undefined && typeof registry?.registerMetric !== 'function')
    throw new OptionsError('ERR_SW_OPTION', WHERE, 'registry must be a prom-client Registry');
  if (prefix !== undefined && (typeof prefix !== 'string' || !METRIC_NAME.test(`${prefix}x`))) {
    const got = JSON.stringify(prefix);
    throw new OptionsError('ERR_SW_OPTION', WHERE, `prefix must be letters, digits, _ or : (got ${got})`);
  }
  const increasing = (b: unknown, i: number, all: readonly unknown[]) =>
    typeof b === 'number' && Number.isFinite(b) && b > 0 && (i === 0 || b > (all[i - 1] as number));
  if (
    buckets !== undefined &&
    (!Array.isArray(buckets) || buckets.length === 0 || !buckets.every(increasing))
  )
    throw new OptionsError('ERR_SW_OPTION', WHERE, 'buckets must be increasing positive numbers of seconds');
}

function createMetrics(registry: Registry, prefix: string, buckets: number[] | undefined): Metrics {
  const registers = [registry];
  try {
    return {
      deliveries: new Counter({
        name: `${prefix}requests_total`,
        help: 'Requests to the webhook receiver, by event type (other: not in the catalogue; none: refused before it was read) and outcome.',
        labelNames: ['type', 'outcome'],
        registers,
      }),
      problems: new Counter({
        name: `${prefix}problems_total`,
        help: 'Problem answers of the webhook receiver, by problem slug (invalid-token, payload-too-large, handler-failed, ...).',
        labelNames: ['problem'],
        registers,
      }),
      handlerSeconds: new Histogram({
        name: `${prefix}handler_duration_seconds`,
        help: "How long each handler of a delivery ran before it was answered (until the answer for one still running), by event type, the delivery's outcome (processed, failed, timeout, ...) and the handler's name.",
        labelNames: ['type', 'outcome', 'handler'],
        ...(buckets === undefined ? {} : { buckets }),
        registers,
      }),
      handlerRuns: new Counter({
        name: `${prefix}handler_runs_total`,
        help: 'Handlers of delivered events by name and how each fared: ok, failed, timeout (still running at the answer), skipped-done (it succeeded in an earlier delivery), skipped-stale (ordered, the event older than its entity).',
        labelNames: ['handler', 'outcome'],
        registers,
      }),
      inFlight: new Gauge({
        name: `${prefix}requests_in_flight`,
        help: 'Requests the webhook receiver is handling now.',
        registers,
      }),
      storeErrors: new Counter({
        name: `${prefix}store_errors_total`,
        help: 'Deliveries answered 503 because the idempotency store failed or timed out.',
        registers,
      }),
      bookkeeping: new Counter({
        name: `${prefix}store_bookkeeping_total`,
        help: 'After an answer: failed markDone calls a background retry recovered (mark-done-recovered) or gave up on (mark-done-failed), successes whose lease was taken over (lease-lost).',
        labelNames: ['event'],
        registers,
      }),
      ordering: new Counter({
        name: `${prefix}ordering_total`,
        help: "What the ordering guard decided for { ordering: 'newest-wins' } handlers, by event type: newest (they ran) or stale (skipped as older than the entity's newest processed event).",
        labelNames: ['type', 'decision'],
        registers,
      }),
      futureTime: new Counter({
        name: `${prefix}ordering_future_time_total`,
        help: "Events of an ordered entity whose time lay past their receipt plus maxFutureSkewMs: their ordered handlers ran, but the entity's newest mark was held at that bound.",
        registers,
      }),
      shed: new Counter({
        name: `${prefix}shed_total`,
        help: 'Deliveries answered 503, unread, to keep a bound: in-flight (maxInFlight) or queue-depth (the inbox maxDepth). The Service retries them.',
        labelNames: ['reason'],
        registers,
      }),
    };
  } catch (error) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      WHERE,
      `could not register the metrics (${(error as Error).message}); choose another prefix or registry`,
    );
  }
}

/**
 * An `onDelivery` that feeds prom-client: deliveries by type and outcome, problems by slug, each
 * handler's duration and runs by name, requests in flight, store errors, and the ordering guard's decisions. Event types outside the catalogue are counted as
 * `other`, so a sender cannot create series at will.
 */
export function prometheusMetrics(options: PrometheusMetricsOptions = {}): PrometheusMetrics {
  checkOptions(options ?? {});
  const registry = options.registry ?? register;
  const prefix = options.prefix ?? 'service_webhooks_';
  const byPrefix = shared.get(registry) ?? new Map<string, Metrics>();
  shared.set(registry, byPrefix);
  const metrics = byPrefix.get(prefix) ?? createMetrics(registry, prefix, options.buckets?.slice());
  byPrefix.set(prefix, metrics);
  // This listener's own count, so a record without a start (a listener wrapped by hand) never goes below 0.
  let open = 0;

  const listener = function recordDelivery(record: DeliveryRecord): void {
    const type = typeLabel(record.type);
    metrics.deliveries.inc({ type, outcome: record.outcome });
    if (record.problem !== null)
      metrics.problems.inc({ problem: SLUG.test(record.problem) ? record.problem : 'other' });
    // Handler names are the router's, a fixed set: the labels stay bounded.
    for (const run of record.handlers ?? NO_RUNS) {
      metrics.handlerRuns.inc({ handler: run.handler, outcome: run.outcome });
      if (run.durationMs !== null)
        metrics.handlerSeconds.observe(
          { type, outcome: record.outcome, handler: run.handler },
          run.durationMs / 1000,
        );
    }
    if (record.outcome === 'store-unavailable') metrics.storeErrors.inc();
    if (record.ordering !== undefined) metrics.ordering.inc({ type, decision: record.ordering });
    if (record.shed !== undefined) metrics.shed.inc({ reason: record.shed });
    if (open > 0) {
      open--;
      metrics.inFlight.dec();
    }
  } as PrometheusMetrics;
  listener.onBookkeeping = function bookkeeping(event: BookkeepingEvent): void {
    if (event === 'future-time') metrics.futureTime.inc();
    else metrics.bookkeeping.inc({ event });
  };
  listener.onRequestStart = function requestStarted(): void {
    open++;
    metrics.inFlight.inc();
  };
  return listener;
}
