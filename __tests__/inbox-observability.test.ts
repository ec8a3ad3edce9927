import { SpanKind, trace } from '@opentelemetry/api';
import { Registry } from 'prom-client';
import { createEventRouter, createFetchHandler, type Inbox } from '../lib';
import { inboxMetrics } from '../lib/metrics';
import { delivery, issued, TOKEN } from './support/contract-rows';
import { describeEachEngine } from './support/describe-each-engine';
import { useInMemoryTracing } from './support/in-memory-tracing';
import { eventually } from './support/inbox-engines';

const { exporter } = useInMemoryTracing();

/** Sends one delivery to a Fetch receiver with the inbox. */
async function send(inbox: Inbox, event: object) {
  const handler = createFetchHandler({
    bearerTokens: [TOKEN],
    router: createEventRouter(),
    inbox,
    logger: false,
  });
  const request = delivery(event);
  const res = await handler(
    new Request('http://127.0.0.1/webhooks', {
      method: 'POST',
      headers: request.headers,
      body: request.body,
    }),
  );
  expect(res.status).toBe(200);
}

describeEachEngine('the inbox on $name, observed', (engine, server) => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });

  it('runs each job in a span linked to its delivery span, the handler spans inside it', async () => {
    const inbox = server().inbox(`spans-${process.pid}`);
    open.push(inbox);
    const tracer = trace.getTracer('test');
    const worker = await inbox.startWorker(
      createEventRouter().on('ag.access_pass.issued', () =>
        tracer.startActiveSpan('write the pass', (s) => s.end()),
      ),
      { logger: false },
    );
    open.push(worker);
    await send(inbox, issued({}, 'evt_traced'));
    await eventually('the job and handler spans', () =>
      exporter.getFinishedSpans().some((s) => s.name === 'write the pass'),
    );
    const spans = exporter.getFinishedSpans();
    const deliverySpan = spans.find((s) => s.kind === SpanKind.SERVER);
    const job = spans.find((s) => s.kind === SpanKind.CONSUMER);
    const handler = spans.find((s) => s.name === 'handle ag.access_pass.issued');
    const own = spans.find((s) => s.name === 'write the pass');
    expect(deliverySpan).toBeDefined();
    expect(job).toMatchObject({
      name: 'process ag.access_pass.issued',
      attributes: { 'cloudevents.event_id': 'evt_traced', 'service_webhooks.inbox.attempt': 1 },
    });
    // Linked, not parented: the delivery was answered before the job ran.
    expect(job?.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([
      [deliverySpan?.spanContext().traceId, deliverySpan?.spanContext().spanId],
    ]);
    expect(handler?.parentSpanContext?.spanId).toBe(job?.spanContext().spanId);
    expect(own?.parentSpanContext?.spanId).toBe(handler?.spanContext().spanId);
  });

  it('measures the queue at each scrape and counts every try', async () => {
    const inbox = server().inbox(`metrics-${process.pid}`);
    open.push(inbox);
    const registry = new Registry();
    const metrics = inboxMetrics({ inbox, registry });
    const worker = await inbox.startWorker(
      createEventRouter().on('ag.access_pass.issued', (event) => {
        if (event.id === 'evt_doomed') throw new Error('no such pass');
      }),
      { attempts: 2, backoff: { delayMs: 10 }, onJob: metrics.onJob, logger: false },
    );
    open.push(worker);
    await send(inbox, issued({}, 'evt_fine'));
    await send(inbox, issued({}, 'evt_doomed'));
    await eventually('a dead letter', async () => (await inbox.status()).dead === 1);
    const text = await registry.metrics();
    const labels = `queue="${inbox.name}"`;
    expect(text).toContain(`service_webhooks_inbox_depth{${labels},engine="${engine.name}"} 0`);
    expect(text).toContain(`service_webhooks_inbox_dead_letters{${labels},engine="${engine.name}"} 1`);
    expect(text).toContain(`service_webhooks_inbox_issues_open{${labels},engine="${engine.name}"} 1`);
    const [issue] = await inbox.issues();
    expect(text).toContain(
      `service_webhooks_inbox_issue_dead_letters{${labels},engine="${engine.name}",issue="${issue!.key}",type="ag.access_pass.issued"} 1`,
    );
    expect(text).toContain(
      `service_webhooks_inbox_oldest_job_age_seconds{${labels},engine="${engine.name}"} 0`,
    );
    expect(text).toContain(
      `service_webhooks_inbox_attempts_total{${labels},type="ag.access_pass.issued",outcome="processed"} 1`,
    );
    expect(text).toContain(
      `service_webhooks_inbox_attempts_total{${labels},type="ag.access_pass.issued",outcome="retry"} 1`,
    );
    expect(text).toContain(
      `service_webhooks_inbox_attempts_total{${labels},type="ag.access_pass.issued",outcome="dead"} 1`,
    );
    expect(text).toMatch(
      /service_webhooks_inbox_job_duration_seconds_count\{queue="[^"]+",type="ag.access_pass.issued",outcome="dead"\} 1/,
    );
  });
});

describe('inboxMetrics', () => {
  it('refuses options it cannot use', () => {
    expect(() => inboxMetrics({} as never)).toThrow(
      /\[service-webhooks\] inboxMetrics: inbox must be an Inbox/,
    );
    const inbox = {
      name: 'q',
      engine: 'fake',
      status: async () => ({ waiting: 0, active: 0, dead: 0, oldestAgeMs: null }),
    };
    expect(() => inboxMetrics({ inbox, registy: 1 } as never)).toThrow(/did you mean "registry"/);
  });

  it("counts what the worker's store did through onJob.onBookkeeping, by queue and event; future-time once, from the try", async () => {
    const inbox = {
      name: 'q-bookkeeping',
      engine: 'fake',
      status: async () => ({ waiting: 0, active: 0, dead: 0, oldestAgeMs: null }),
    } as unknown as Inbox;
    const registry = new Registry();
    // Detached, as a worker's options hold it: the listener and its onBookkeeping need no `this`.
    const { onJob } = inboxMetrics({ inbox, registry });
    const { onBookkeeping } = onJob;
    for (const event of ['lease-lost', 'lease-lost', 'mark-done-recovered', 'future-time'] as const)
      onBookkeeping(event);
    const text = await registry.metrics();
    expect(text).toContain(
      'service_webhooks_inbox_bookkeeping_total{queue="q-bookkeeping",event="lease-lost"} 2',
    );
    expect(text).toContain(
      'service_webhooks_inbox_bookkeeping_total{queue="q-bookkeeping",event="mark-done-recovered"} 1',
    );
    expect(text).not.toMatch(/inbox_bookkeeping_total\{[^}]*event="future-time"/);
  });
});
