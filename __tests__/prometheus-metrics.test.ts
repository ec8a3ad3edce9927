import { Counter, Registry } from 'prom-client';
import {
  createEventRouter,
  MemoryStore,
  OptionsError,
  type AnyWebhookEvent,
  type IdempotencyStore,
} from 'service-webhooks';
import { prometheusMetrics, type PrometheusMetricsOptions } from 'service-webhooks/metrics';
import { buildEvent, DELIVERY_HEADERS } from 'service-webhooks/testing';
import { nodeDoor, type OpenDoor, type RawRequest } from './support/doors';

const TOKEN = 'tok_metrics';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const router = createEventRouter().on('ag.access_pass.*', async (event: AnyWebhookEvent) => {
  const cue = (event.data as { title?: string | null }).title;
  if (cue === 'fail') throw new Error('the pass store said no');
  if (cue === 'slow') await (slowGate ?? sleep(200));
});

/** While set, a 'slow' handler waits for it instead of a fixed time. */
let slowGate: Promise<void> | undefined;

/** A MemoryStore that is down for one event id. */
function storeDownFor(id: string): IdempotencyStore & { close(): void } {
  const memory = new MemoryStore({ logger: false });
  return {
    claim: (key, token, leaseMs) =>
      key.endsWith(id) ? Promise.reject(new Error('ECONNREFUSED')) : memory.claim(key, token, leaseMs),
    markDone: (key, token, ttl) => memory.markDone(key, token, ttl),
    release: (key, token) => memory.release(key, token),
    get: (key) => memory.get(key),
    close: () => memory.close(),
  };
}

function delivery(event: object, headers: Record<string, string> = {}): RawRequest {
  return {
    headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}`, ...headers },
    body: JSON.stringify(event),
  };
}
const issued = (id: string, data: Record<string, unknown> = {}) =>
  buildEvent('ag.access_pass.issued', data, { id });

/** One sample's value from the exposition text, or undefined when the series does not exist. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const have = match[2] === undefined ? [] : match[2].split(',');
    if (have.length === wanted.length && wanted.every((w) => have.includes(w))) return Number(match[3]);
  }
  return undefined;
}

describe('prometheusMetrics', () => {
  let open: OpenDoor | undefined;
  let store: ReturnType<typeof storeDownFor> | undefined;
  afterEach(async () => {
    await open?.drain({ timeoutMs: 2000 });
    await open?.close();
    store?.close();
    open = undefined;
  });

  async function start(options: PrometheusMetricsOptions = {}) {
    const registry = new Registry();
    store = storeDownFor('evt_store_down');
    open = await nodeDoor.open({
      bearerTokens: [TOKEN],
      router,
      logger: false,
      idempotency: store,
      onDelivery: prometheusMetrics({ registry, ...options }),
    });
    return { door: open, scrape: () => registry.metrics() };
  }

  it('counts a scripted sequence: processed, duplicate, 401, 500, 503, an unknown type', async () => {
    const { door, scrape } = await start();
    const statuses = [];
    statuses.push((await door.send(delivery(issued('evt_1')))).status);
    statuses.push((await door.send(delivery(issued('evt_1')))).status);
    statuses.push((await door.send(delivery(issued('evt_2'), { authorization: 'Bearer nope' }))).status);
    statuses.push((await door.send(delivery(issued('evt_3', { title: 'fail' })))).status);
    statuses.push((await door.send(delivery(issued('evt_store_down')))).status);
    const made_up = { ...issued('evt_4'), type: 'ag.attacker.chose_this_type' };
    statuses.push((await door.send(delivery(made_up))).status);
    expect(statuses).toEqual([200, 200, 401, 500, 503, 200]);

    const text = await scrape();
    const deliveries = (type: string, outcome: string) =>
      sample(text, 'service_webhooks_requests_total', { type, outcome });
    expect(deliveries('ag.access_pass.issued', 'processed')).toBe(1);
    expect(deliveries('ag.access_pass.issued', 'duplicate')).toBe(1);
    expect(deliveries('none', 'rejected')).toBe(1);
    expect(deliveries('ag.access_pass.issued', 'failed')).toBe(1);
    expect(deliveries('ag.access_pass.issued', 'store-unavailable')).toBe(1);
    expect(deliveries('other', 'unhandled')).toBe(1);
    expect(text).not.toContain('attacker');
    const problems = (problem: string) => sample(text, 'service_webhooks_problems_total', { problem });
    expect([problems('invalid-token'), problems('handler-failed'), problems('store-unavailable')]).toEqual([
      1, 1, 1,
    ]);
    // Handlers ran for the processed and the failed delivery only, each counted under its outcome.
    const handlerCount = (outcome: string) =>
      sample(text, 'service_webhooks_handler_duration_seconds_count', {
        type: 'ag.access_pass.issued',
        outcome,
        handler: 'ag.access_pass.*',
      });
    expect([handlerCount('processed'), handlerCount('failed'), handlerCount('duplicate')]).toEqual([
      1,
      1,
      undefined,
    ]);
    expect(
      sample(text, 'service_webhooks_handler_duration_seconds_bucket', {
        type: 'ag.access_pass.issued',
        outcome: 'failed',
        handler: 'ag.access_pass.*',
        le: '+Inf',
      }),
    ).toBe(1);
    expect(sample(text, 'service_webhooks_store_errors_total')).toBe(1);
    expect(sample(text, 'service_webhooks_requests_in_flight')).toBe(0);
    expect(text).toMatch(/# TYPE service_webhooks_handler_duration_seconds histogram/);
  });

  it('names each handler: its runs by outcome (ok, failed, skipped-done) and its own duration', async () => {
    const registry = new Registry();
    let emailTries = 0;
    const named = createEventRouter()
      .on('ag.access_pass.issued', () => undefined, { name: 'crm' })
      .on(
        'ag.access_pass.issued',
        () => {
          if (++emailTries === 1) throw new Error('the mail server said no');
        },
        { name: 'welcome-email' },
      );
    const memory = new MemoryStore({ logger: false });
    open = await nodeDoor.open({
      bearerTokens: [TOKEN],
      router: named,
      logger: false,
      idempotency: memory,
      onDelivery: prometheusMetrics({ registry }),
    });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await open.send(delivery(issued('evt_named')))).status);
    memory.close();
    expect(statuses).toEqual([500, 200, 200]);
    const text = await registry.metrics();
    const runs = (handler: string, outcome: string) =>
      sample(text, 'service_webhooks_handler_runs_total', { handler, outcome });
    expect([runs('crm', 'ok'), runs('crm', 'skipped-done'), runs('crm', 'failed')]).toEqual([
      1,
      1,
      undefined,
    ]);
    expect([runs('welcome-email', 'failed'), runs('welcome-email', 'ok')]).toEqual([1, 1]);
    const seconds = (handler: string, outcome: string) =>
      sample(text, 'service_webhooks_handler_duration_seconds_count', {
        type: 'ag.access_pass.issued',
        outcome,
        handler,
      });
    // Observed for the runs only: crm ran in the failed delivery, not in its retry.
    expect([seconds('crm', 'failed'), seconds('crm', 'processed')]).toEqual([1, undefined]);
    expect([seconds('welcome-email', 'failed'), seconds('welcome-email', 'processed')]).toEqual([1, 1]);
    // The duplicate ran nothing, so named nothing.
    expect(text).not.toMatch(/handler_runs_total\{[^}]*outcome="duplicate"/);
  });

  it('counts what the store bookkeeping reports after an answer, by event', async () => {
    const registry = new Registry();
    const metrics = prometheusMetrics({ registry });
    for (const event of ['mark-done-recovered', 'mark-done-failed', 'lease-lost', 'lease-lost'] as const)
      metrics.onBookkeeping(event);
    const text = await registry.metrics();
    const count = (event: string) => sample(text, 'service_webhooks_store_bookkeeping_total', { event });
    expect([count('mark-done-recovered'), count('mark-done-failed'), count('lease-lost')]).toEqual([1, 1, 2]);
  });

  it('shows requests in flight while a handler runs', async () => {
    const { door, scrape } = await start();
    let open!: () => void;
    slowGate = new Promise<void>((resolve) => (open = resolve));
    const slow = door.send(delivery(issued('evt_slow', { title: 'slow' })));
    // Wait (bounded) until the request is inside the receiver, however busy the machine is.
    let inFlight = 0;
    for (let i = 0; i < 100 && inFlight !== 1; i++) {
      await sleep(20);
      inFlight = sample(await scrape(), 'service_webhooks_requests_in_flight') ?? 0;
    }
    expect(inFlight).toBe(1);
    open();
    slowGate = undefined;
    expect((await slow).status).toBe(200);
    expect(sample(await scrape(), 'service_webhooks_requests_in_flight')).toBe(0);
  });

  it('takes a prefix and buckets', async () => {
    const { door, scrape } = await start({ prefix: 'shop_hooks_', buckets: [0.5, 30] });
    await door.send(delivery(issued('evt_p')));
    const text = await scrape();
    expect(
      sample(text, 'shop_hooks_requests_total', { type: 'ag.access_pass.issued', outcome: 'processed' }),
    ).toBe(1);
    expect(
      sample(text, 'shop_hooks_handler_duration_seconds_bucket', {
        type: 'ag.access_pass.issued',
        outcome: 'processed',
        handler: 'ag.access_pass.*',
        le: '30',
      }),
    ).toBe(1);
    expect(text).not.toContain('service_webhooks_');
  });

  it('never lets requests_in_flight go below zero when a record comes without a start', async () => {
    const registry = new Registry();
    const metrics = prometheusMetrics({ registry });
    metrics({
      eventId: null,
      type: null,
      source: null,
      layout: null,
      outcome: 'rejected',
      status: 401,
      problem: 'invalid-token',
      durationMs: 1,
      handlerMs: null,
      attempt: null,
    });
    expect(sample(await registry.metrics(), 'service_webhooks_requests_in_flight')).toBe(0);
  });

  it('shares its metrics between receivers on one registry, and refuses a name taken by another metric', async () => {
    const registry = new Registry();
    const first = prometheusMetrics({ registry });
    const second = prometheusMetrics({ registry });
    first.onRequestStart();
    second.onRequestStart();
    expect(sample(await registry.metrics(), 'service_webhooks_requests_in_flight')).toBe(2);
    const taken = new Registry();
    new Counter({ name: 'app_requests_total', help: 'mine', registers: [taken] });
    expect(() => prometheusMetrics({ registry: taken, prefix: 'app_' })).toThrow(
      /prometheusMetrics: could not register the metrics .*app_requests_total.*; choose another prefix or registry/,
    );
  });

  it.each([
    ['an unknown option', { prefx: 'x_' }, /unknown option "prefx"; did you mean "prefix"\?/],
    ['a prefix with a dash', { prefix: 'my-app_' }, /prefix must be letters, digits, _ or :/],
    ['a prefix that is not a string', { prefix: 7 }, /prefix must be/],
    ['a registry that is not one', { registry: {} }, /registry must be a prom-client Registry/],
    ['empty buckets', { buckets: [] }, /buckets must be increasing positive numbers/],
    ['decreasing buckets', { buckets: [1, 0.5] }, /buckets must be increasing/],
    ['a negative bucket', { buckets: [-1, 1] }, /buckets must be increasing/],
  ])('refuses %s at construction', (_name, options, message) => {
    const call = () => prometheusMetrics({ registry: new Registry(), ...(options as object) });
    expect(call).toThrow(OptionsError);
    expect(call).toThrow(message);
  });
});
