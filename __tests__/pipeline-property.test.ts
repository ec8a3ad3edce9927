import fc from 'fast-check';
import { createEventRouter, EVENT_TYPES } from '../lib';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';
import { DOORS, type OpenDoor, type RawRequest } from './support/doors';

const SEED = Number(process.env.PROPERTY_SEED ?? 20261122);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);
const TOKEN = 'tok_property';

const json = fc.jsonValue({ maxDepth: 2 });
/** One change to a valid delivery, as a broken client, a proxy or an attacker might make it. */
const mutation = fc.oneof(
  fc.record({
    kind: fc.constant('set-field' as const),
    field: fc.constantFrom(
      'specversion',
      'id',
      'source',
      'type',
      'time',
      'dataschema',
      'data',
      'data_base64',
      'datacontenttype',
      'Bad-Ext',
      'traceparent',
    ),
    value: json,
  }),
  fc.record({
    kind: fc.constant('set-data' as const),
    field: fc.constantFrom(
      'id',
      'devices',
      'details',
      'start_date',
      'tag_id',
      'metadata',
      'current_balance',
      'access_pass_id',
      'device',
      '__proto__',
    ),
    value: json,
  }),
  fc.record({
    kind: fc.constant('drop-field' as const),
    field: fc.constantFrom('specversion', 'id', 'source', 'type', 'data'),
  }),
  fc.record({
    kind: fc.constant('header' as const),
    name: fc.constantFrom(
      'content-type',
      'authorization',
      'content-encoding',
      'x-service-webhook-challenge',
      'ce-specversion',
      'content-length',
    ),
    value: fc.string({ maxLength: 30 }),
  }),
  fc.record({
    kind: fc.constant('drop-header' as const),
    name: fc.constantFrom('content-type', 'authorization'),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('bytes' as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 6 }),
  }),
  fc.record({
    kind: fc.constant('method' as const),
    method: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH'),
  }),
);

type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(event: Record<string, unknown>, mutations: Mutation[]): RawRequest {
  const headers: Record<string, string> = { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}` };
  const envelope = structuredClone(event);
  let method = 'POST';
  const byteEdits: Mutation[] = [];
  for (const m of mutations) {
    if (m.kind === 'set-field') envelope[m.field] = m.value;
    else if (m.kind === 'set-data') (envelope.data as Record<string, unknown>)[m.field] = m.value;
    else if (m.kind === 'drop-field') delete envelope[m.field];
    else if (m.kind === 'header') headers[m.name] = m.value.replace(/[^\x20-\x7e]/g, '');
    else if (m.kind === 'drop-header') delete headers[m.name];
    else if (m.kind === 'method') method = m.method;
    else byteEdits.push(m);
  }
  if (headers['content-length'] !== undefined) delete headers['content-length'];
  let body = Buffer.from(JSON.stringify(envelope));
  for (const m of byteEdits) {
    if (m.kind === 'truncate') body = body.subarray(0, m.at % (body.length + 1));
    if (m.kind === 'bytes') {
      const at = m.at % (body.length + 1);
      body = Buffer.concat([body.subarray(0, at), Buffer.from(m.bytes), body.subarray(at)]);
    }
  }
  return { method, headers, body };
}

describe.each(DOORS)('random deliveries through $name', (door) => {
  let open: OpenDoor;
  const succeeded = new Set<string>();
  const escaped: unknown[] = [];
  const onEscape = (error: unknown) => void escaped.push(error);

  beforeAll(async () => {
    process.on('unhandledRejection', onEscape);
    process.on('uncaughtException', onEscape);
    const router = createEventRouter()
      .on('ag.*', (event) => void succeeded.add(event.id))
      .onUnhandled((event) => void succeeded.add(event.id));
    open = await door.open({ bearerTokens: [TOKEN], router, logger: false, limit: 64 * 1024 });
  });
  afterAll(async () => {
    await open.close();
    process.off('unhandledRejection', onEscape);
    process.off('uncaughtException', onEscape);
  });

  it(`never a 5xx, every error problem+json, 200 only after the handlers ran (seed ${SEED}, ${RUNS} runs)`, async () => {
    const figures: Record<number, number> = {};
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...EVENT_TYPES),
        fc.constantFrom('A' as const, 'B' as const),
        fc.array(mutation, { maxLength: 3 }),
        async (type, layout, mutations) => {
          const event = buildEvent(type, {}, { layout }) as unknown as Record<string, unknown>;
          const answer = await open.send(mutate(event, mutations));
          figures[answer.status] = (figures[answer.status] ?? 0) + 1;
          expect(answer.status).toBeLessThan(500);
          if (answer.status === 200 || answer.status === 201) {
            const body = JSON.parse(answer.text) as { id?: string; challenge?: string };
            if (body.challenge === undefined) expect(succeeded.has(body.id as string)).toBe(true);
          } else {
            expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
            expect(JSON.parse(answer.text)).toMatchObject({ status: answer.status });
          }
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    console.log(`${door.name} (seed ${SEED}): statuses ${JSON.stringify(figures)}`);
    expect(escaped).toEqual([]);
    expect(Object.keys(figures).length).toBeGreaterThan(3);
  }, 120_000);
});
