import { jsonText } from '../lib/inbox/queued-delivery';

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
