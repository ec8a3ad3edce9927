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
