import { Counter, Gauge, Histogram, register, type Registry } from 'prom-client';
import { checkOptionKeys } from '../check-option-keys';
import { withTimeout } from '../with-timeout';
import type { BookkeepingEvent } from '../idempotency/bookkeeping-event';
import type { Inbox, InboxStatus, JobRecord } from '../inbox/inbox';
import type { InboxIssue } from '../inbox/inbox-issue';
import { MAX_ISSUES } from '../inbox/check-dead-letter-query';
import { OptionsError } from '../options-error';
import { typeLabel } from './type-label';

/** Options of {@link inboxMetrics}. */
export interface InboxMetricsOptions {
  /** The inbox whose queue is measured at each scrape. Required. */
  inbox: Inbox;
  /** The prom-client registry. Defaults to prom-client's global `register`. */
  registry?: Registry;
  /** Prepended to every metric name. Defaults to `'service_webhooks_'`. */
  prefix?: string;
}

/** Give `onJob` to `inbox.startWorker(router, { onJob })`: it counts every try. */
export interface InboxMetrics {
  /**
   * Counts one try of a job: by queue, type and outcome, with its duration; and, as its
   * `onBookkeeping`, what the worker's idempotency store did besides (`inbox_bookkeeping_total`).
   */
  onJob: ((record: JobRecord) => void) & {
    /** Counts what the worker's store did besides a try, by queue and event (`future-time` aside). */
    onBookkeeping(event: BookkeepingEvent): void;
  };
}

interface Metrics {
  inboxes: Set<Inbox>;
  attempts: Counter<'queue' | 'type' | 'outcome'>;
  jobSeconds: Histogram<'queue' | 'type' | 'outcome'>;
  futureTime: Counter<'queue' | 'type'>;
  bookkeeping: Counter<'queue' | 'event'>;
}

const KEYS = ['inbox', 'registry', 'prefix'];
const WHERE = 'inboxMetrics';
/** A scrape waits this long for a queue's status, then reports what it had. */
const STATUS_TIMEOUT_MS = 5_000;
const shared = new WeakMap<Registry, Map<string, Metrics>>();
/** The issues with a series of their own in the dead-letter gauge; the rest are summed as `other`. */
export const TOP_ISSUES = 10;
/** Issues are read at most this often (a read walks the dead letters), whatever the scrape interval. */
const ISSUES_EVERY_MS = 30_000;

/** The top issues by count, each its own series, and the rest summed as one `other`. */
function issueSeries(issues: readonly InboxIssue[]): { issue: string; type: string; count: number }[] {
  const sorted = [...issues].sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1));
  const top = sorted
    .slice(0, TOP_ISSUES)
    .map((i) => ({ issue: i.key, type: typeLabel(i.type), count: i.count }));
  const rest = sorted.slice(TOP_ISSUES).reduce((sum, i) => sum + i.count, 0);
  return rest === 0 ? top : [...top, { issue: 'other', type: 'other', count: rest }];
}

function gauges(registry: Registry, prefix: string, inboxes: Set<Inbox>): void {
  const latest = new Map<Inbox, InboxStatus>();
  const issues = new Map<Inbox, { at: number; issues: InboxIssue[] }>();
  const issuesReading = new Set<Inbox>();
  // One status read per scrape, shared by the gauges (prom-client collects them one by one).
  let reading: { at: number; done: Promise<void> } | undefined;
  const read = () => {
    if (reading === undefined || Date.now() - reading.at > 1_000)
      reading = { at: Date.now(), done: readAll() };
    return reading.done;
  };
  const readAll = async () => {
    await Promise.all(
      [...inboxes].map(async (inbox) => {
        // A queue that does not answer keeps its last figures rather than failing the scrape.
        const status = await withTimeout(inbox.status(), STATUS_TIMEOUT_MS, 'the inbox status').catch(
          () => undefined,
        );
        if (status !== undefined) latest.set(inbox, status);
        // An inbox of one's own written before issues existed has none to count.
        if (typeof inbox.issues !== 'function') return;
        if (Date.now() - (issues.get(inbox)?.at ?? 0) < ISSUES_EVERY_MS || issuesReading.has(inbox)) return;
        // A read that outlasts the scrape goes on and serves a later one; none starts beside it.
        const reading = inbox
          .issues({ limit: MAX_ISSUES })
          .then((read) => void issues.set(inbox, { at: Date.now(), issues: read }))
          .catch(() => undefined)
          .finally(() => issuesReading.delete(inbox));
        issuesReading.add(inbox);
        await withTimeout(reading, STATUS_TIMEOUT_MS, 'the inbox issues').catch(() => undefined);
      }),
    );
  };
  const gauge = (name: string, help: string, value: (s: InboxStatus) => number | null) =>
    new Gauge({
      name: `${prefix}${name}`,
      help,
      labelNames: ['queue', 'engine'],
      registers: [registry],
      async collect() {
        await read();
        this.reset();
        for (const [inbox, status] of latest) {
          const v = value(status);
          if (v !== null) this.set({ queue: inbox.name, engine: inbox.engine }, v);
        }
      },
    });
  gauge(
    'inbox_depth',
    'Queued events waiting for a worker (including retries waiting their delay).',
    (s) => s.waiting + s.delayed,
  );
  gauge(
    'inbox_paused',
    'Whether the queue is paused (1): receivers still queue events, no worker starts a try.',
    (s) => (s.paused ? 1 : 0),
  );
  gauge('inbox_active', 'Queued events a worker runs now.', (s) => s.active);
  gauge('inbox_dead_letters', 'Queued events whose tries ran out: kept until replayed.', (s) => s.dead);
  new Gauge({
    name: `${prefix}inbox_issues_open`,
    help: 'Open issues: dead letters grouped by event type, handler and error (inbox.issues()).',
    labelNames: ['queue', 'engine'],
    registers: [registry],
    async collect() {
      await read();
      this.reset();
      for (const [inbox, read] of issues)
        this.set({ queue: inbox.name, engine: inbox.engine }, read.issues.length);
    },
  });
  new Gauge({
    name: `${prefix}inbox_issue_dead_letters`,
    help: `Dead letters by issue: the ${TOP_ISSUES} largest issues by key, the rest summed as issue="other".`,
    labelNames: ['queue', 'engine', 'issue', 'type'],
    registers: [registry],
    async collect() {
      await read();
      this.reset();
      for (const [inbox, read] of issues)
        for (const { issue, type, count } of issueSeries(read.issues))
          this.set({ queue: inbox.name, engine: inbox.engine, issue, type }, count);
    },
  });
  gauge('inbox_oldest_job_age_seconds', 'Age of the oldest event still waiting.', (s) =>
    s.oldestAgeMs === null ? 0 : s.oldestAgeMs / 1000,
  );
}

function createMetrics(registry: Registry, prefix: string): Metrics {
  const inboxes = new Set<Inbox>();
  try {
    gauges(registry, prefix, inboxes);
    return {
      inboxes,
      attempts: new Counter({
        name: `${prefix}inbox_attempts_total`,
        help: 'Tries of queued events, by queue, event type and outcome (processed, unhandled, duplicate, retry, dead).',
        labelNames: ['queue', 'type', 'outcome'],
        registers: [registry],
      }),
      jobSeconds: new Histogram({
        name: `${prefix}inbox_job_duration_seconds`,
        help: 'How long a try of a queued event ran, by queue, event type and outcome.',
        labelNames: ['queue', 'type', 'outcome'],
        registers: [registry],
      }),
      futureTime: new Counter({
        name: `${prefix}inbox_future_time_total`,
        help: "Tries of queued events whose time lay past their receipt plus maxFutureSkewMs: the entity's newest mark was held at that bound.",
        labelNames: ['queue', 'type'],
        registers: [registry],
      }),
      bookkeeping: new Counter({
        name: `${prefix}inbox_bookkeeping_total`,
        help: "The worker's idempotency store after a try: failed markDone calls a background retry recovered (mark-done-recovered) or gave up on (mark-done-failed), records refused because their lease had run out or been taken over (lease-lost).",
        labelNames: ['queue', 'event'],
        registers: [registry],
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
 * Prometheus metrics of a durable inbox: its depth, running jobs, dead letters and oldest job's age,
 * read from the queue at each scrape, and every try counted (give `onJob` to `startWorker`).
 */
export function inboxMetrics(options: InboxMetricsOptions): InboxMetrics {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('ERR_SW_OPTION', WHERE, 'takes options: inboxMetrics({ inbox })');
  checkOptionKeys(options, KEYS, WHERE);
  const { inbox } = options;
  if (typeof inbox?.status !== 'function' || typeof inbox.name !== 'string')
    throw new OptionsError('ERR_SW_OPTION', WHERE, 'inbox must be an Inbox (bullmqInbox(), pgBossInbox())');
  const registry = options.registry ?? register;
  const prefix = options.prefix ?? 'service_webhooks_';
  const byPrefix = shared.get(registry) ?? new Map<string, Metrics>();
  shared.set(registry, byPrefix);
  const metrics = byPrefix.get(prefix) ?? createMetrics(registry, prefix);
  byPrefix.set(prefix, metrics);
  metrics.inboxes.add(inbox);
  const queue = inbox.name;
  const onJob = function onJob(record: JobRecord): void {
    const labels = { queue, type: typeLabel(record.type), outcome: record.outcome };
    metrics.attempts.inc(labels);
    metrics.jobSeconds.observe(labels, record.durationMs / 1000);
    if (record.futureTime === true) metrics.futureTime.inc({ queue, type: labels.type });
  } as InboxMetrics['onJob'];
  // future-time is counted from the try's record, by type: not twice.
  onJob.onBookkeeping = function bookkeeping(event: BookkeepingEvent): void {
    if (event !== 'future-time') metrics.bookkeeping.inc({ queue, event });
  };
  return { onJob };
}
