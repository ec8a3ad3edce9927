import { createEventRouter } from '../lib';
import { parseJsonText } from '../lib/core/event/parse-json-body';
import { buildEvent } from '../lib/testing';
import { bodyDelivery, doorReceiver } from './support/door-receiver';
import { DOORS } from './support/doors';

const TOKEN = 'tok_json_body';

const ownKeys = (value: unknown) => Object.keys(value as object);

describe('parseJsonText', () => {
  // Every spelling of a prototype key is dropped, escaped ones included: the quick text check that
  // decides whether to scan must not miss any of them.
  it.each([
    ['a plain __proto__ key', '{"a":1,"__proto__":{"polluted":true}}'],
    ['an escaped __proto__ key', '{"a":1,"\\u005f_proto__":{"polluted":true}}'],
    ['an escape in the middle of __proto__', '{"a":1,"__pro\\u0074o__":{"polluted":true}}'],
    ['a nested escaped __proto__ key', '{"a":1,"data":{"\\u005f\\u005fproto__":{"polluted":true}}}'],
  ])('drops %s', (_name, text) => {
    const value = parseJsonText(text) as Record<string, unknown>;
    expect(ownKeys(value)).not.toContain('__proto__');
    if (value.data !== undefined) expect(ownKeys(value.data)).not.toContain('__proto__');
    expect(value.a).toBe(1);
  });

  it.each([
    ['a plain', '{"a":1,"constructor":{"prototype":{"polluted":true}}}'],
    ['an escaped', '{"a":1,"\\u0063onstructor":{"prototype":{"polluted":true}}}'],
  ])('drops %s constructor.prototype chain', (_name, text) => {
    const value = parseJsonText(text) as Record<string, unknown>;
    expect(ownKeys(value)).toEqual(['a']);
  });

  it('leaves an ordinary body as JSON.parse reads it', () => {
    const text = '{"id":"evt_1","data":{"title":"constructors","list":[1,2]}}';
    expect(parseJsonText(text)).toEqual(JSON.parse(text));
  });
});

describe.each(DOORS)('strict UTF-8 through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it.each([
    ['FF FE', [0xff, 0xfe]],
    ['an overlong slash', [0xc0, 0xaf]],
    ['CESU-8 surrogates', [0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80]],
  ])('refuses %s in the body with 400 invalid-utf8, running nothing', async (_name, bytes) => {
    let runs = 0;
    const router = createEventRouter().onAny(() => void runs++);
    const { d } = await start({ router });
    const text = JSON.stringify(buildEvent('ag.hid_org.created', { hid_org_id: '@@' }));
    const [head, tail] = text.split('@@') as [string, string];
    const body = Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(tail)]);
    const answer = await d.send(bodyDelivery(TOKEN, body));
    expect([answer.status, JSON.parse(answer.text).type]).toEqual([
      400,
      'urn:service-webhooks:problem:invalid-utf8',
    ]);
    expect(runs).toBe(0);
  });
});
