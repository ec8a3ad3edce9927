import { context, type Span, type Tracer } from '@opentelemetry/api';
import { DeliverySpan } from '../lib/observability/delivery-span';
import { newDeliveryRecord } from '../lib/core/delivery-record';
import { parseCloudEventEnvelope } from '../lib/core/event/cloud-event-envelope';
import type { WebhookRequest } from '../lib/core/webhook-request';
import { normalizeEvent } from '../lib/events/normalize-event';
import { buildEvent } from '../lib/testing';

// The delivery span contains the tracing SDK's failures itself (issue 23): the core calls it with no
// wrapper, so nothing it does may throw, and the dispatch it wraps runs exactly once.
const request: WebhookRequest = {
  method: 'POST',
  header: () => undefined,
  hasHeaderPrefix: () => false,
  body: { hasBody: false, read: async () => new Uint8Array(0) },
};
const envelope = parseCloudEventEnvelope(buildEvent('ag.hid_org.created'));
const event = normalizeEvent(envelope, envelope.data, envelope);
const span = { setAttributes() {}, setAttribute() {}, setStatus() {}, end() {} } as unknown as Span;

function traced(startSpan: () => Span) {
  const failures: unknown[] = [];
  const tracer = { startSpan } as unknown as Tracer;
  return { trace: new DeliverySpan(tracer, request, 0, (error) => void failures.push(error)), failures };
}

afterEach(() => jest.restoreAllMocks());

describe('DeliverySpan, with an SDK that throws', () => {
  it('begin and end throw nothing when the tracer cannot start a span, and say so', () => {
    const { trace, failures } = traced(() => {
      throw new Error('sdk down');
    });
    expect(() => trace.begin(envelope, event)).not.toThrow();
    expect(() => trace.end(newDeliveryRecord(undefined))).not.toThrow();
    expect(failures).toHaveLength(2);
  });

  it.each([
    ['before calling it', false],
    ['after calling it', true],
  ])('around runs the dispatch exactly once when the context manager throws %s', (_when, callFirst) => {
    const { trace, failures } = traced(() => span);
    trace.begin(envelope, event);
    jest.spyOn(context, 'with').mockImplementation(((_ctx: unknown, fn: () => unknown) => {
      if (callFirst) fn();
      throw new Error('context manager down');
    }) as typeof context.with);
    let runs = 0;
    expect(trace.around(() => ++runs)).toBe(1);
    expect([runs, failures.length]).toEqual([1, 1]);
  });

  it("around lets the dispatch's own error through, without running it again", () => {
    const { trace, failures } = traced(() => span);
    trace.begin(envelope, event);
    let runs = 0;
    expect(() =>
      trace.around(() => {
        runs++;
        throw new Error('dispatch threw');
      }),
    ).toThrow('dispatch threw');
    expect([runs, failures.length]).toEqual([1, 0]);
  });
});
