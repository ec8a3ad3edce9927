import { ProxyTracerProvider, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createEventRouter, createFetchHandler, RetryLater, type AnyWebhookEvent } from '../lib';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';
import { DOORS, type OpenDoor, type RawRequest } from './support/doors';
import { useInMemoryTracing } from './support/in-memory-tracing';

const TOKEN = 'tok_tracing';
const EVENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const EVENT_PARENT = 'b7ad6b7169203331';
const HTTP_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const HTTP_PARENT = '00f067aa0ba902b7';
const eventTraceparent = `00-${EVENT_TRACE}-${EVENT_PARENT}-01`;
const httpTraceparent = `00-${HTTP_TRACE}-${HTTP_PARENT}-01`;

const { exporter, provider } = useInMemoryTracing();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Handlers that fail, refuse or hang on cue (the event's `title`), and open a span of their own. */
const router = createEventRouter()
  .on('ag.access_pass.*', async function issuePass(event: AnyWebhookEvent) {
    const cue = (event.data as { title?: string | null }).title;
    trace.getTracer('app').startActiveSpan('app work', (span) => span.end());
    if (cue === 'fail') throw new TypeError('the pass store said no');
    if (cue === 'retry-later') throw new RetryLater('downstream is down');
    if (cue === 'throw-data') throw event.data;
    if (cue === 'slow') await sleep(200);
  })
  .onAny(() => undefined);

function delivery(event: object, headers: Record<string, string> = {}): RawRequest {
  return {
    headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}`, ...headers },
    body: JSON.stringify(event),
  };
}

const spans = () => exporter.getFinishedSpans();
const serverSpan = () => {
  const found = spans().filter((s) => s.kind === SpanKind.SERVER);
  expect(found).toHaveLength(1);
  return found[0] as ReadableSpan;
};
const handlerSpans = () => spans().filter((s) => s.name.startsWith('handle '));

describe.each(DOORS)('tracing through $name', (door) => {
  let open: OpenDoor;
  beforeAll(async () => {
    open = await door.open({ bearerTokens: [TOKEN], router, logger: false, timeoutMs: 50 });
  });
  afterAll(async () => {
    await open.drain({ timeoutMs: 2000 });
    await open.close();
  });

  it('continues the event trace with a SERVER span and one child span per handler', async () => {
    const event = {
      ...buildEvent('ag.access_pass.issued', {}, { id: 'evt_t1' }),
      traceparent: eventTraceparent,
      tracestate: 'vendor=abc',
    };
    const answer = await open.send(delivery(event, { 'x-service-webhook-attempt': '2' }));
    expect(answer.status).toBe(200);
    const server = serverSpan();
    expect(server.name).toBe('process ag.access_pass.issued');
    expect(server.attributes).toMatchObject({
      'cloudevents.event_id': 'evt_t1',
      'cloudevents.event_type': 'ag.access_pass.issued',
      'cloudevents.event_source': event.source,
      'cloudevents.event_spec_version': '1.0',
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'user_agent.original': 'Service-Webhooks/1.0',
      'service_webhooks.outcome': 'processed',
      'service_webhooks.layout': 'A',
      'service_webhooks.attempt': 2,
    });
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
    expect(server.spanContext().traceId).toBe(EVENT_TRACE);
    expect(server.parentSpanContext).toMatchObject({
      traceId: EVENT_TRACE,
      spanId: EVENT_PARENT,
      isRemote: true,
    });
    expect(server.parentSpanContext?.traceState?.get('vendor')).toBe('abc');
    expect(server.links).toEqual([]);

    const handlers = handlerSpans();
    expect(handlers.map((s) => s.name)).toEqual([
      'handle ag.access_pass.issued',
      'handle ag.access_pass.issued',
    ]);
    for (const span of handlers) {
      expect(span.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(EVENT_TRACE);
    }
    expect(handlers.map((s) => s.attributes['code.function.name'])).toContain('issuePass');
    // Each span names its handler as the router does (the onAny one by its registration), and its run.
    expect(
      handlers
        .map((s) => [
          s.attributes['service_webhooks.handler'],
          s.attributes['service_webhooks.handler.attempt'],
        ])
        .sort(),
    ).toEqual([
      ['issuePass', 1],
      ['onAny', 1],
    ]);
    // The application's own span nests under the handler span that ran it.
    const appWork = spans().find((s) => s.name === 'app work');
    const issuing = handlers.find((s) => s.attributes['code.function.name'] === 'issuePass');
    expect(appWork?.parentSpanContext?.spanId).toBe(issuing?.spanContext().spanId);
  });

  it("falls back to the request's traceparent header", async () => {
    const event = buildEvent('ag.access_pass.issued');
    await open.send(delivery(event, { traceparent: httpTraceparent, tracestate: 'http=1' }));
    const server = serverSpan();
    expect(server.parentSpanContext).toMatchObject({ traceId: HTTP_TRACE, spanId: HTTP_PARENT });
    expect(server.parentSpanContext?.traceState?.get('http')).toBe('1');
  });

  it("prefers the event's traceparent, linking the request's", async () => {
    const event = { ...buildEvent('ag.access_pass.issued'), traceparent: eventTraceparent };
    await open.send(delivery(event, { traceparent: httpTraceparent }));
    const server = serverSpan();
    expect(server.parentSpanContext?.spanId).toBe(EVENT_PARENT);
    expect(server.links.map((l) => l.context.spanId)).toEqual([HTTP_PARENT]);
  });

  it.each([
    ['all-zero trace id', `00-${'0'.repeat(32)}-${EVENT_PARENT}-01`],
    ['version ff', `ff-${EVENT_TRACE}-${EVENT_PARENT}-01`],
    ['version 00 with more after the flags', `${eventTraceparent}-extra`],
    ['upper-case hex', eventTraceparent.toUpperCase()],
    ['garbage', 'not a traceparent'],
    ['a number', 42],
  ])('starts a new trace when the traceparent is invalid (%s)', async (_name, traceparent) => {
    await open.send(delivery({ ...buildEvent('ag.access_pass.issued'), traceparent }));
    expect(serverSpan().parentSpanContext).toBeUndefined();
  });

  it('marks a failing handler: ERROR on both spans, the exception type and message, never event data', async () => {
    const event = buildEvent('ag.access_pass.issued', { title: 'fail' });
    expect((await open.send(delivery(event))).status).toBe(500);
    const server = serverSpan();
    expect(server.status).toEqual({ code: SpanStatusCode.ERROR, message: 'handler-failed' });
    expect(server.attributes).toMatchObject({
      'service_webhooks.outcome': 'failed',
      'service_webhooks.problem': 'handler-failed',
      'error.type': 'handler-failed',
      'http.response.status_code': 500,
    });
    const failed = handlerSpans().find((s) => s.status.code === SpanStatusCode.ERROR);
    expect(failed?.events.map((e) => e.name)).toEqual(['exception']);
    expect(failed?.events[0]?.attributes).toMatchObject({
      'exception.type': 'TypeError',
      'exception.message': 'the pass store said no',
    });
    expect(failed?.attributes['error.type']).toBe('TypeError');
  });

  it('keeps only the type of a thrown value that is not an Error', async () => {
    const event = buildEvent('ag.access_pass.issued', { title: 'throw-data' });
    expect((await open.send(delivery(event))).status).toBe(500);
    const text = JSON.stringify(spans().map((s) => [s.attributes, s.events, s.status]));
    expect(text).toContain('"exception.type":"object"');
    expect(text).not.toMatch(/Ada Lovelace|100234|throw-data/);
  });

  it.each([
    ['a handler asking to retry later', 'retry-later', 'retry-later', 'failed'],
    ['a handler past timeoutMs', 'slow', 'handler-timeout', 'timeout'],
  ])('marks %s as ERROR', async (_name, title, problem, outcome) => {
    const event = buildEvent('ag.access_pass.issued', { title });
    expect((await open.send(delivery(event))).status).toBe(503);
    await open.drain({ timeoutMs: 2000 });
    const server = serverSpan();
    expect(server.status).toEqual({ code: SpanStatusCode.ERROR, message: problem });
    expect(server.attributes['service_webhooks.outcome']).toBe(outcome);
  });

  it('names a span by "other" for a type the catalogue does not know, keeping the type as an attribute', async () => {
    await open.send(delivery({ ...buildEvent('ag.access_pass.issued'), type: 'ag.brand_new.thing' }));
    const server = serverSpan();
    expect(server.name).toBe('process other');
    expect(server.attributes['cloudevents.event_type']).toBe('ag.brand_new.thing');
    expect(handlerSpans().map((s) => s.name)).toEqual(['handle other']);
  });

  it('traces a request refused before auth as a root span: the sender does not choose our trace', async () => {
    const event = { ...buildEvent('ag.access_pass.issued'), traceparent: eventTraceparent };
    for (let i = 0; i < 5; i++) {
      const answer = await open.send(
        delivery(event, { authorization: 'Bearer nope', traceparent: httpTraceparent }),
      );
      expect(answer.status).toBe(401);
    }
    const servers = spans().filter((s) => s.kind === SpanKind.SERVER);
    expect(servers).toHaveLength(5);
    for (const server of servers) {
      expect(server.name).toBe('POST');
      expect(server.parentSpanContext).toBeUndefined();
      expect([HTTP_TRACE, EVENT_TRACE]).not.toContain(server.spanContext().traceId);
      expect(server.attributes).toMatchObject({
        'service_webhooks.outcome': 'rejected',
        'service_webhooks.problem': 'invalid-token',
        'http.response.status_code': 401,
      });
      expect(Object.keys(server.attributes).filter((k) => k.startsWith('cloudevents.'))).toEqual([]);
      expect(server.status.code).toBe(SpanStatusCode.UNSET);
    }
    expect(handlerSpans()).toEqual([]);
  });

  it("continues the request's traceparent for an authenticated delivery refused for its body", async () => {
    const answer = await open.send({
      ...delivery({}),
      body: '{"specversion":',
      headers: { ...delivery({}).headers, traceparent: httpTraceparent },
    });
    expect(answer.status).toBe(400);
    const server = serverSpan();
    expect(server.parentSpanContext?.spanId).toBe(HTTP_PARENT);
    expect(server.spanContext().traceId).toBe(HTTP_TRACE);
  });

  it('traces the handshake', async () => {
    await open.send({ headers: { 'x-service-webhook-challenge': 'chl_1' } });
    expect(serverSpan().attributes['service_webhooks.outcome']).toBe('handshake');
  });
});

describe('with no SDK registered', () => {
  it('asks no tracer for anything, not even the no-op one', async () => {
    const quiet = createEventRouter().on('ag.access_pass.*', () => undefined);
    const handler = createFetchHandler({ bearerTokens: [TOKEN], router: quiet, logger: false });
    trace.disable();
    const proxy = trace.getTracerProvider() as ProxyTracerProvider;
    const spies = [
      jest.spyOn(proxy, 'getTracer'),
      jest.spyOn(proxy, 'getDelegateTracer'),
      jest.spyOn(proxy.getDelegate(), 'getTracer'),
    ];
    try {
      const answer = await handler(
        new Request('http://127.0.0.1/webhooks', {
          method: 'POST',
          headers: delivery({}).headers,
          body: JSON.stringify({ ...buildEvent('ag.access_pass.issued'), traceparent: eventTraceparent }),
        }),
      );
      expect(answer.status).toBe(200);
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    } finally {
      spies.forEach((spy) => spy.mockRestore());
      trace.setGlobalTracerProvider(provider);
    }
  });

  it('emits nothing, and a later registration is picked up without rebuilding the receiver', async () => {
    const handler = createFetchHandler({ bearerTokens: [TOKEN], router, logger: false });
    const send = () =>
      handler(
        new Request('http://127.0.0.1/webhooks', {
          method: 'POST',
          headers: delivery({}).headers,
          body: JSON.stringify(buildEvent('ag.access_pass.issued')),
        }),
      );
    trace.disable();
    try {
      expect((await send()).status).toBe(200);
      expect(spans()).toEqual([]);
    } finally {
      trace.setGlobalTracerProvider(provider);
    }
    expect((await send()).status).toBe(200);
    expect(serverSpan().name).toBe('process ag.access_pass.issued');
  });
});
