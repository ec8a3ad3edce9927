import fc from 'fast-check';
import { entityOf, EVENT_TYPES } from '../lib';
import { cloudEventEnvelopeSchema, fastEnvelope } from '../lib/core/event/cloud-event-envelope';
import { CREDENTIAL_FIELDS, dataSchemas, EVENT_DATA_FIELDS } from '../lib/events/data-schemas';
import { DATE, DATETIME_LOCAL, DATETIME_OFFSET } from '../lib/events/fast-event-data';
import { z } from 'zod';

const { eventDataSchema } = dataSchemas();
import { fastEventData } from '../lib/events/fast-event-data';
import { buildEvent } from '../lib/testing';

const SEED = Number(process.env.PROPERTY_SEED ?? 20261122);
const RUNS = 2000;

/** Strings near every format the schemas check: valid, nearly valid, and plainly wrong. */
const tricky = fc.oneof(
  fc.constantFrom(
    '2026-11-22',
    '2026-02-30',
    '2026-11-22T10:00:00Z',
    '2026-11-22T10:00:00.123+01:00',
    '2026-11-22T10:00:00',
    '2026-11-22T24:00:00Z',
    '2026-11-22 10:00:00Z',
    '04a1b2c3d4e5f6',
    '04A1B2C3D4E5F',
    'https://service.example/schemas/access_pass/v1.2.0.json',
    ' https://service.example/x',
    'https://exa mple.com',
    'http:example.com',
    'not a url',
    '',
    ' ',
    '\u0000',
    '\t\n\u007f',
    '\u00a0',
    '1.0',
  ),
  fc.string({ maxLength: 20 }),
);
const value = fc.oneof(
  tricky,
  fc.constant(null),
  fc.constant(undefined),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.array(fc.oneof(tricky, fc.constant(null), fc.integer()), { maxLength: 3 }),
  fc.dictionary(
    fc.constantFrom('id', 'type', 'protocol', 'platform', 'extra'),
    fc.oneof(tricky, fc.constant(null), fc.integer()),
    { maxKeys: 4 },
  ),
);

function agrees<T>(
  fast: T | undefined,
  schema: { safeParse(x: unknown): { success: boolean; data?: unknown } },
  input: unknown,
): void {
  if (fast === undefined) return;
  const slow = schema.safeParse(input);
  expect(slow.success).toBe(true);
  expect(fast).toEqual(slow.data);
}

describe('the fast paths agree with the zod schemas', () => {
  it(`accepts only what eventDataSchema accepts, with the same output (seed ${SEED})`, () => {
    const field = fc.constantFrom(
      'id',
      'state',
      'start_date',
      'expiration_date',
      'tag_id',
      'current_balance',
      'protocol',
      'metadata',
      'card_templates',
      'details',
      'devices',
      'unknown_extra',
    );
    fc.assert(
      fc.property(fc.dictionary(field, value, { maxKeys: 8 }), (data) =>
        agrees(fastEventData(data), eventDataSchema, data),
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it(`accepts only envelopes the CloudEvents schema accepts (seed ${SEED})`, () => {
    const attribute = fc.constantFrom(
      'specversion',
      'id',
      'source',
      'type',
      'datacontenttype',
      'dataschema',
      'subject',
      'time',
      'data_base64',
    );
    fc.assert(
      fc.property(fc.dictionary(attribute, value, { maxKeys: 9 }), fc.boolean(), (overrides, complete) => {
        const base = complete ? { specversion: '1.0', id: 'e', source: 's', type: 't' } : {};
        const envelope = { ...base, ...overrides };
        agrees(fastEnvelope(envelope), cloudEventEnvelopeSchema(), envelope);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it.each([
    ['a plain schema URL', 'https://service.example/schemas/access_pass/v1.4.0.json'],
    ['one with spaces around it', ' https://service.example/schemas/access_pass/v1.4.0.json '],
    ['one with a tab and a newline', '\thttps://service.example/schemas/access_pass/v1.4.0.json\n'],
  ])('agrees on %s as a dataschema, the first time and once it is remembered', (_, dataschema) => {
    const envelope = { specversion: '1.0', id: 'e', source: 's', type: 't', dataschema };
    for (let seen = 0; seen < 2; seen++) agrees(fastEnvelope(envelope), cloudEventEnvelopeSchema(), envelope);
  });

  it('answers each dataschema by its own URL, from a run of events with one and from a change of URL', () => {
    const good = {
      specversion: '1.0',
      id: 'e',
      source: 's',
      type: 't',
      dataschema: 'https://x.example/s.json',
    };
    const bad = { ...good, dataschema: 'schemas/relative.json' };
    expect(cloudEventEnvelopeSchema().safeParse(bad).success).toBe(false);
    for (const envelope of [good, good, bad, bad, good, bad]) {
      expect(fastEnvelope(envelope)).toBe(envelope === good ? good : undefined);
    }
  });

  it(`reads the same event.entity from the fast path's data as from the schema's (seed ${SEED})`, () => {
    const field = fc.constantFrom(
      'id',
      'card_template_id',
      'landing_page_id',
      'credential_profile_id',
      'account_id',
      'unknown_extra',
    );
    let compared = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...EVENT_TYPES),
        fc.dictionary(field, value, { maxKeys: 6 }),
        (type, data) => {
          const fast = fastEventData(data);
          if (fast === undefined) return;
          compared++;
          expect(entityOf(type, fast)).toEqual(entityOf(type, eventDataSchema.parse(data)));
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    expect(compared).toBeGreaterThan(RUNS / 10);
  });

  it.each(EVENT_TYPES)('takes the fast path for a real %s in layout A', (type) => {
    const event = buildEvent(type) as unknown as Record<string, unknown>;
    expect(fastEnvelope(event)).toBe(event);
    const data = fastEventData(event.data as Record<string, unknown>);
    expect(data).toBeDefined();
    expect(data).toEqual(eventDataSchema.parse(event.data));
  });
});

describe('what the fast paths wrote out instead of loading zod', () => {
  it('names the data fields of eventDataSchema, in its order', () => {
    expect([...EVENT_DATA_FIELDS]).toEqual(Object.keys(eventDataSchema.shape));
  });

  it.each([
    ['date', DATE, z.core.regexes.date],
    ['datetime with offset or local', DATETIME_LOCAL, z.core.regexes.datetime({ offset: true, local: true })],
    ['datetime with offset', DATETIME_OFFSET, z.core.regexes.datetime({ offset: true })],
  ])('matches as zod’s %s pattern does', (_name, ours, theirs) => {
    expect([ours.source, ours.flags]).toEqual([theirs.source, theirs.flags]);
  });
});

describe('what the fast path reads by hand instead of a regex or a field list', () => {
  const TAG_ID = /^[0-9a-fA-F]{14}$/;
  const fastTag = (tag_id: string) => fastEventData({ tag_id }) !== undefined;

  it.each([
    '04a1b2c3d4e5f6',
    '04A1B2C3D4E5F6',
    'abcdefABCDEF09',
    '04a1b2c3d4e5f',
    '04a1b2c3d4e5f6a',
    '04a1b2c3d4e5g6',
    '04a1b2c3d4e5G6',
    '04a1b2c3d4e5@6',
    '04a1b2c3d4e5`6',
    '04a1b2c3d4e5/6',
    '04a1b2c3d4e5:6',
    '04a1b2c3d4e5\u00106',
    '04a1b2c3d4e5\u00196',
    '04a1b2c3d4e5\u01616',
    '04a1b2c3d4e5\uff116',
    '',
  ])('takes %j as a tag_id exactly when the pattern does', (tag) => {
    expect(fastTag(tag)).toBe(TAG_ID.test(tag));
  });

  it(`takes a tag_id exactly when the pattern does, for strings near one (seed ${SEED})`, () => {
    const near = fc.constantFrom(...'0123456789abcdefABCDEFgG@`/:\u0010\u0019\u0030\u0041\u0161 ');
    fc.assert(
      fc.property(fc.array(near, { minLength: 12, maxLength: 16 }), (chars) => {
        const tag = chars.join('');
        expect(fastTag(tag)).toBe(TAG_ID.test(tag));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('fills every credential field of details and of each device, null where not carried', () => {
    const data = fastEventData({ details: {}, devices: [{}, { extra: 1 }] });
    const nulls = Object.fromEntries(CREDENTIAL_FIELDS.map((field) => [field, null]));
    expect(data?.details).toStrictEqual(nulls);
    expect(data?.devices).toStrictEqual([
      { ...nulls, type: null },
      { extra: 1, ...nulls, type: null },
    ]);
  });

  it('passes unknown keys through on a run whose keys change, the remembered known-only list aside', () => {
    const run: Record<string, unknown>[] = [
      { id: 'a', state: 'active' },
      { id: 'a', state: 'active' },
      { id: 'a', extra: 1 },
      { extra: 2 },
      { id: 'b' },
      { other: 3 },
      { state: 'x', id: 'a' },
      { id: 'a', state: 'active', more: [1] },
    ];
    for (const data of run) expect(fastEventData(data)).toStrictEqual(eventDataSchema.parse(data));
  });

  it('returns copies, as the schema does: a handler changing event.data leaves the raw data alone', () => {
    const raw = buildEvent('ag.access_pass.devices.added', { metadata: { floor: 4 } }).data as Record<
      string,
      unknown
    >;
    const before = structuredClone(raw);
    const data = fastEventData(raw);
    if (data?.metadata == null || data.devices == null || data.card_templates == null) {
      throw new Error('expected the fast path to read the real event');
    }
    data.metadata.floor = 5;
    (data.devices[0] as Record<string, unknown>).status = 'changed';
    data.card_templates.push('more');
    expect(raw).toStrictEqual(before);
  });
});

describe('the envelope’s id and source, read by their first character when it is plain ASCII', () => {
  it.each([
    ['a plain id', 'e1', true],
    ['a tilde', '~', true],
    ['an exclamation mark', '!', true],
    ['DEL alone (a control character)', '\u007f', false],
    ['a space alone', ' ', false],
    ['a space then a letter', ' e', true],
    ['a control character then a letter', '\u0001e', true],
    ['a no-break space alone', '\u00a0', false],
    ['a letter beyond ASCII', 'é', true],
  ])('%s as the id: accepted exactly when the schema accepts it', (_name, id, accepted) => {
    const envelope = { specversion: '1.0', id, source: id, type: 't' };
    expect(cloudEventEnvelopeSchema().safeParse(envelope).success).toBe(accepted);
    expect(fastEnvelope(envelope) !== undefined).toBe(accepted);
  });
});
