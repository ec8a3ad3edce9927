import crypto from 'node:crypto';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { normalizeEvent } from '../lib/events/normalize-event';
import { isQueuedDelivery, jobIdFor, queuedDelivery, jsonText } from '../lib/inbox/queued-delivery';
import { buildEvent } from '../lib/testing';

const envelope = buildEvent('ag.access_pass.issued', {}, { id: 'evt_q' });
const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('queuedDelivery', () => {
  it('keeps the envelope as received and the headers ctx.header reads, never a credential', () => {
    const headers: Record<string, string> = {
      authorization: 'Bearer whsk_secret',
      cookie: 'session=1',
      'x-forwarded-client-cert': 'Hash=abc',
      'user-agent': 'Service-Webhooks/1.0',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    };
    const queued = queuedDelivery('k', event, (name) => headers[name], null);
    expect(queued).toMatchObject({ key: 'k', id: 'evt_q', type: 'ag.access_pass.issued' });
    expect(JSON.parse(queued.envelope)).toEqual(envelope);
    expect(queued.headers).toEqual({
      'user-agent': 'Service-Webhooks/1.0',
      traceparent: headers.traceparent,
    });
    expect(JSON.stringify(queued)).not.toMatch(/whsk_secret|session=1|Hash=abc/);
    // Without a delivery span, the request's own traceparent is what the job links to.
    expect(queued.traceparent).toBe(headers.traceparent);
    expect(isQueuedDelivery(JSON.parse(JSON.stringify(queued)))).toBe(true);
  });

  it.each([
    null,
    'x',
    {},
    { key: 'k', id: 'i', type: 't' },
    { key: 1, id: 'i', type: 't', envelope: '{}' },
    // An object envelope: the queue holds the envelope as text.
    { key: 'k', id: 'i', type: 't', envelope: {} },
  ])('does not take %p for a queued delivery', (value) => expect(isQueuedDelivery(value)).toBe(false));
});

describe("queuedDelivery's receivedAt", () => {
  // Written from a kept second and the milliseconds: the text must be toISOString's at every instant,
  // the same second again, the next one, one before, and the years toISOString writes otherwise.
  const instants = [
    Date.UTC(2026, 10, 26, 16, 36, 5, 0),
    Date.UTC(2026, 10, 26, 16, 36, 5, 7),
    Date.UTC(2026, 10, 26, 16, 36, 5, 42),
    Date.UTC(2026, 10, 26, 16, 36, 5, 999),
    Date.UTC(2026, 10, 26, 16, 36, 6, 100),
    Date.UTC(2026, 10, 26, 16, 36, 4, 1),
    0,
    -1,
    -1_000,
    -62_198_755_200_001, // -000001-12-31T23:59:59.999Z
    253_402_300_800_001, // +010000-01-01T00:00:00.001Z
  ];
  it.each(instants)('at %p is the instant as toISOString writes it', (at) => {
    jest.useFakeTimers({ now: at });
    try {
      expect(queuedDelivery('k', event, () => undefined, null).receivedAt).toBe(new Date(at).toISOString());
    } finally {
      jest.useRealTimers();
    }
  });
  // A Date.now with a fraction (a mocked one, or a polyfill on performance.now): toISOString truncates
  // it to whole milliseconds. Jest's fake clock hands out whole ones, so Date.now itself is mocked.
  it.each([1.5, -1.5, Date.UTC(2026, 10, 26, 16, 36, 5, 999) + 0.75])(
    'at %p (a fraction of a millisecond) is the instant as toISOString writes it',
    (at) => {
      const now = jest.spyOn(Date, 'now').mockReturnValue(at);
      try {
        expect(queuedDelivery('k', event, () => undefined, null).receivedAt).toBe(new Date(at).toISOString());
      } finally {
        now.mockRestore();
      }
    },
  );
});

describe('jobIdFor', () => {
  it('is a UUID PostgreSQL accepts, the same for the same key and apart for others', () => {
    const keys = [
      '',
      'k',
      idempotencyKey('', '/service/x', 'evt_1'),
      idempotencyKey('', '/service/x', 'evt_2'),
      'sha256:abc',
    ];
    const ids = keys.map(jobIdFor);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(keys.length);
    expect(keys.map(jobIdFor)).toEqual(ids);
    expect(ids.some((id) => id.includes(':'))).toBe(false);
  });

  // A redelivery reaches receivers of other versions and runtimes sharing one queue: the same key
  // must be the same job on each, whether its runtime has the one-shot crypto.hash or not.
  it.each([
    ['0:20:/service/access-grid3:evt_1', 'ea010dbb-192a-82ba-b295-d58b4d191250'],
    ['clé é', '19769b1b-0fcb-8942-84b5-e4a18e9446ce'],
    // One key for each hex digit the variant is made from (evt_1 above is 7), as the ids were made
    // before the variant was read from the digit's code.
    ['0:20:/service/access-grid3:evt_0', '138e87d4-da42-8669-8312-650d8cd15248'],
    ['0:20:/service/access-grid3:evt_8', 'be6df04a-f0bc-86ea-93f3-105b56b1f917'],
    ['0:20:/service/access-grid3:evt_13', '5ed5defe-570e-87d5-a3fe-17b74a530bf5'],
    ['0:20:/service/access-grid3:evt_16', 'b4c42b3b-8a9d-8c20-bfc2-3056137b0145'],
    ['0:20:/service/access-grid3:evt_7', 'bbf6f0d1-bac5-859b-8e28-8f0e56f90ced'],
    ['0:20:/service/access-grid3:evt_14', '4973fdb2-ad87-8c56-9d26-e09fd9d3315b'],
    ['0:20:/service/access-grid3:evt_18', '61d164d1-a87e-82a1-aa26-d3832ab43a41'],
    ['0:20:/service/access-grid3:evt_21', '87896f7a-039e-8a41-8726-d4e6ae4c93fa'],
    ['0:20:/service/access-grid3:evt_3', '59ab27e6-2e33-8e29-92e1-1a960b01a0d0'],
    ['0:20:/service/access-grid3:evt_67', '7babc1d3-08ad-807d-a756-45db2109db85'],
    ['0:20:/service/access-grid3:evt_20', '3e809107-5d0e-864f-bc46-c5aad03a4122'],
    ['0:20:/service/access-grid3:evt_11', '98f98100-9fe6-8146-897e-9d70ff30afd3'],
    ['0:20:/service/access-grid3:evt_9', '7aaff400-1dfa-8142-972c-31a71639a053'],
    ['0:20:/service/access-grid3:evt_4', '2e13aeb2-0054-8c08-a22f-121877fb71f4'],
    ['0:20:/service/access-grid3:evt_12', '699e07b1-e802-89fd-b8de-f2b76a136499'],
  ])('gives %p the job id it always had, with and without crypto.hash', (key, id) => {
    expect(jobIdFor(key)).toBe(id);
    const original = crypto.hash;
    Object.assign(crypto, { hash: undefined });
    try {
      expect(jobIdFor(key)).toBe(id);
    } finally {
      Object.assign(crypto, { hash: original });
    }
  });
});

/** `{"a":{"a":…1…}}`, `levels` deep, built without recursion. */
function nested(levels: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? { a: value } : [value, null];
  return value;
}

describe('jsonText', () => {
  it.each([
    ['an envelope', { specversion: '1.0', id: 'e', data: { n: -0.5, s: 'é"\\\u2028', t: true, z: null } }],
    ['arrays with holes JSON.stringify writes as null', [1, undefined, () => 1, Symbol('s'), 'x']],
    ['keys JSON.stringify leaves out', { kept: 1, gone: undefined, f: () => 1, s: Symbol('s') }],
    ['a Date (toJSON)', { at: new Date(0) }],
    ['odd keys', { '': 1, '"': 2, '\n': 3, '0': 4 }],
    ['empty containers', { a: {}, b: [], c: [{}] }],
  ])('writes %s as JSON.stringify does', (_name, value) => {
    expect(jsonText(value)).toBe(JSON.stringify(value));
  });

  it.each([5_000, 100_000])('writes a value %i levels deep, which JSON.stringify cannot', (levels) => {
    const value = nested(levels, { kept: 'leaf', gone: undefined });
    expect(() => JSON.stringify(value)).toThrow(RangeError);
    // The text JSON.stringify would write, built level by level as the value was.
    let expected = '{"kept":"leaf"}';
    for (let i = 0; i < levels; i++) expected = i % 2 === 0 ? `{"a":${expected}}` : `[${expected},null]`;
    expect(jsonText(value)).toBe(expected);
  });

  it('refuses a cycle deeper than JSON.stringify reaches, as JSON.stringify refuses a shallow one', () => {
    const top: { a: unknown } = { a: null };
    let inner: { a: unknown } = top;
    for (let i = 0; i < 10_000; i++) inner = (inner.a = { a: null }) as { a: unknown };
    inner.a = top;
    expect(() => jsonText(top)).toThrow(/\[service-webhooks\] cannot queue a value with a cycle/);
  });

  it('refuses undefined, which has no text', () => {
    expect(() => jsonText(undefined)).toThrow(/\[service-webhooks\] the value has no JSON text/);
  });
});
