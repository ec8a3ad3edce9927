import { createEventRouter, MemoryStore, type IdempotencyStore } from '../lib';
import { idempotencyKey, positionAtOrAfter, storedKey, storedPosition } from '../lib/idempotency/store-keys';
import { PostgresStore } from '../lib/postgres';
import { RedisStore } from '../lib/redis';
import { buildEvent } from '../lib/testing';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS } from './support/doors';

const TOKEN = 'tok_keys';
const SRC = 'https://api.service.example/v1/accounts/acct_7f3a9c';
/** The length-prefixed text an unhashed key is. */
const plainKey = (scope: string, source: string, id: string) =>
  `${scope.length}:${scope}${source.length}:${source}${id.length}:${id}`;
/** A fixed-width time, as `sortableTime` writes it. */
const TIME = '0001700000000000000000';

/**
 * Keys as the receiver built them and shared stores wrote them before issue 23 moved key building
 * into lib/idempotency/store-keys.ts (recorded from lib/core/idempotency-key.ts and
 * lib/redis/stored-key.ts at 8f65630). A deployed Redis or PostgreSQL ledger holds exactly these
 * forms, so a change to any of them loses its keys after an upgrade. 'plain': the receiver's key is
 * the length-prefixed text / the stored form is the receiver's key unchanged.
 */
const EVENT_KEYS: { name: string; scope: string; source: string; id: string; key: string; stored: string }[] =
  [
    { name: 'ascii', scope: '', source: SRC, id: 'evt_0001', key: 'plain', stored: 'plain' },
    { name: 'scoped', scope: 'tenant-a', source: SRC, id: 'evt_0001', key: 'plain', stored: 'plain' },
    {
      name: 'NUL in source',
      scope: '',
      source: 'src\u0000X',
      id: 'Y',
      key: 'plain',
      stored: '#sha256:dd8f544d7e5cfcd9da878e79a5e374f501237c8923dc542c079cda1566b42073',
    },
    {
      name: 'NUL in id',
      scope: '',
      source: 'src',
      id: 'X\u0000Y',
      key: 'plain',
      stored: '#sha256:24036ec8812b824ae27d1dcb755ea9ca954de55fc9f41df21da143a4019fac87',
    },
    {
      name: 'lone high surrogate',
      scope: '',
      source: SRC,
      id: '\ud800',
      key: 'sha256:8HmyaKNuE1vUvxVT-ykM9UlO-NqAxxXiFUYYGCJQfJw',
      stored: 'plain',
    },
    {
      name: 'lone low surrogate',
      scope: '',
      source: SRC,
      id: '\udfff',
      key: 'sha256:JHuiWFqTlb21iZHOVE8KB0JpI8hesjtrkmcgPvI8abM',
      stored: 'plain',
    },
    {
      name: 'emoji',
      scope: '',
      source: SRC,
      id: 'evt_\u{1F600}',
      key: 'sha256:1bZnxbsiZEIbhoaOnDA6mJU0rsNdFlR6l2FVqi5n9oM',
      stored: 'plain',
    },
    { name: 'non-ASCII BMP', scope: '', source: SRC, id: 'évt_日本', key: 'plain', stored: 'plain' },
    {
      name: 'key of 200 characters, the longest plain',
      scope: '',
      source: SRC,
      id: 'x'.repeat(140),
      key: 'plain',
      stored: 'plain',
    },
    {
      name: 'key of 201 characters',
      scope: '',
      source: SRC,
      id: 'x'.repeat(141),
      key: 'sha256:kCNCHgnBdALiGgCh0veFpDrb1E14wieLKsqRFAQyAsk',
      stored: 'plain',
    },
    {
      name: 'long id',
      scope: '',
      source: SRC,
      id: 'e'.repeat(10_000),
      key: 'sha256:qihKQn_jZxQL3Sr-XzAT_9-XwIfNu5PWx_9ypfS0cZ0',
      stored: 'plain',
    },
    {
      name: 'long non-ascii',
      scope: '',
      source: SRC,
      id: 'é'.repeat(300),
      key: 'sha256:mIBVmfGPGmerc8OgyAjQ1D2gmbMR5NpDw5bnws3OvhM',
      stored: 'plain',
    },
    {
      name: 'long surrogate',
      scope: '',
      source: SRC,
      id: '\ud800'.repeat(300),
      key: 'sha256:4nqV6c__CI9iCJHMHGMBuw7Sm531vLLEitacY9LoQfM',
      stored: 'plain',
    },
    {
      name: 'long source',
      scope: '',
      source: `/service/${'s'.repeat(200)}`,
      id: 'evt_1',
      key: 'sha256:vy2rJ-hzfZw5X0NfSTdbCNnVsojFWLdDMpyTLAPjc_M',
      stored: 'plain',
    },
    { name: 'entity', scope: '', source: 'access_pass', id: 'ap_123', key: 'plain', stored: 'plain' },
    {
      name: 'entity scoped',
      scope: 'tenant-a',
      source: 'hid_org',
      id: 'org_1',
      key: 'plain',
      stored: 'plain',
    },
    {
      name: 'entity long',
      scope: '',
      source: 'card_template',
      id: 't'.repeat(300),
      key: 'sha256:NoFoYpjUK_11P_oGDfiBXjtVRni3TZHv9KegT_ZKClc',
      stored: 'plain',
    },
    { name: 'empty', scope: '', source: '', id: '', key: 'plain', stored: 'plain' },
  ];

/** Event ids as a shared store writes them inside an entity's position (the id itself, not its key). */
const POSITION_IDS: { name: string; id: string; stored: string }[] = [
  { name: 'ascii', id: 'evt_0001', stored: 'plain' },
  { name: 'empty', id: '', stored: 'plain' },
  {
    name: 'leading #',
    id: '#evt',
    stored: '#sha256:716a7dbb3f140aff3f49adffbc6080a813d7e0c04107c1ab7a2f56f3db227b2a',
  },
  {
    name: '#sha256 lookalike',
    id: '#sha256:abc',
    stored: '#sha256:d9618f2fcaf3faec4eb20e8c72ff2c5bf610882adaf2756b86854a2d2738dcdb',
  },
  { name: 'id of 256 characters, the longest plain', id: 'x'.repeat(256), stored: 'plain' },
  {
    name: 'id of 257 characters',
    id: 'x'.repeat(257),
    stored: '#sha256:90f2bd6d1f5e2a42c566f2f2a767ab0113fc480a4af6b44002411d0253df49b8',
  },
  {
    name: 'NUL',
    id: 'a\u0000b',
    stored: '#sha256:d06c13d806836ab3011b178376b23276469c411c1c199ec8fbfd3a4a5b2b95e3',
  },
  {
    name: 'lone high',
    id: '\ud800',
    stored: '#sha256:205022e3428b7c8276cf247b36e4e512db5651e5cb3472c253d9ee893a8ac750',
  },
  {
    name: 'lone low',
    id: 'a\udfffb',
    stored: '#sha256:91969a97ae854e3c217f1528a4273ea1fc30f7b69f374c02d5512b53326c026b',
  },
  { name: 'emoji', id: '\u{1F600}', stored: 'plain' },
  { name: '256 non-ascii', id: 'é'.repeat(256), stored: 'plain' },
  {
    name: '257 non-ascii',
    id: 'é'.repeat(257),
    stored: '#sha256:d6ad5c861066333e0ab3f1b09549a698e1feba4d5b7cf715cb5ab68612c29241',
  },
  { name: 'pipe', id: 'a|b', stored: 'plain' },
];

const expectedKey = (row: (typeof EVENT_KEYS)[number]) =>
  row.key === 'plain' ? plainKey(row.scope, row.source, row.id) : row.key;
const expectedStored = (row: { stored: string }, plain: string) =>
  row.stored === 'plain' ? plain : row.stored;

/** A RedisStore over a fake client that records every command's words. */
function recordingRedis() {
  const commands: string[][] = [];
  const store = new RedisStore({
    sendCommand: (...words: string[]) => {
      commands.push(words);
      if (words[0] === 'SCRIPT') return `sha-${commands.length}`;
      if (words[0] === 'CONFIG') throw new Error('CONFIG refused');
      return words[0] === 'GET' ? null : 0;
    },
  });
  return { store, commands };
}

/** A PostgresStore over a fake pool that records every statement's values. */
function recordingPostgres() {
  const values: unknown[][] = [];
  const pool = {
    query: (_text: string, v?: unknown[]) => {
      values.push(v ?? []);
      return Promise.resolve({ rows: [] as unknown[] });
    },
  };
  return { store: new PostgresStore({ pool, cleanupIntervalMs: 3_600_000 }), values };
}

describe('store keys stay byte-identical across releases', () => {
  it.each(EVENT_KEYS)('builds the receiver key of an event or entity ($name) as before', (row) => {
    expect(idempotencyKey(row.scope, row.source, row.id)).toBe(expectedKey(row));
  });

  it('builds each key from its own scope and source when consecutive keys change either (the start of the last key is reused)', () => {
    const calls: [string, string, string][] = [
      ['', SRC, 'a'],
      ['', SRC, 'b'],
      ['tenant-a', SRC, 'b'],
      ['tenant-a', 'https://other.example/x', 'b'],
      ['', SRC, 'd'],
      ['', `${SRC}`.slice(0), 'c'],
      ['', 'src', '\u0000X'],
      ['', 'src\u0000', 'X'],
    ];
    const keys = calls.map(([scope, source, id]) => idempotencyKey(scope, source, id));
    expect(keys).toEqual(calls.map(([scope, source, id]) => plainKey(scope, source, id)));
    expect(new Set(keys).size).toBe(calls.length);
  });

  it.each(EVENT_KEYS)('RedisStore writes the event and entity key ($name) as before', async (row) => {
    const key = expectedKey(row);
    const stored = expectedStored(row, key);
    expect(storedKey(key)).toBe(stored);
    const { store, commands } = recordingRedis();
    await store.get(key);
    await store.releaseEntity(key, 'tok');
    expect(commands.find(([c]) => c === 'GET')).toEqual(['GET', `service-webhooks:${stored}`]);
    expect(commands.find(([c]) => c === 'EVALSHA')?.slice(2, 4)).toEqual([
      '1',
      `service-webhooks:entity:${stored}`,
    ]);
  });

  it.each(EVENT_KEYS)('PostgresStore writes the event and entity key ($name) as before', async (row) => {
    const key = expectedKey(row);
    const stored = expectedStored(row, key);
    const { store, values } = recordingPostgres();
    await store.get(key);
    await store.releaseEntity(key, 'tok');
    expect(values.map((v) => v[0])).toEqual([stored, stored]);
  });

  it.each(POSITION_IDS)(
    'both shared stores write the position of an event id ($name) as before',
    async (row) => {
      const position = { time: TIME, eventId: row.id };
      const written = `${TIME}|${expectedStored(row, row.id)}`;
      expect(storedPosition(position)).toBe(written);
      const redis = recordingRedis();
      await redis.store.leaseEntity('0:0:1:k', 'tok', 1_000, position);
      expect(redis.commands.find(([c]) => c === 'EVALSHA')?.at(-1)).toBe(written);
      const postgres = recordingPostgres();
      await postgres.store.leaseEntity('0:0:1:k', 'tok', 1_000, position);
      expect(postgres.values[0]?.[3]).toBe(written);
    },
  );
});

/** Ids whose order by UTF-16 code units and by UTF-8 bytes agree and disagree. */
const ORDERED_IDS = [
  '',
  'a',
  'ab',
  'b',
  'é',
  'ω',
  '\uD7FF',
  '\uE000',
  '\uFFFD',
  '😀',
  'a😀',
  'a\uFFFD',
  '𝒜',
  '\uD800',
];

describe('positionAtOrAfter: the one order of positions', () => {
  const pairs = ORDERED_IDS.flatMap((a) => ORDERED_IDS.map((b) => [a, b] as const));
  it.each(pairs)('orders %j against %j by UTF-8 bytes, as Redis and COLLATE "C" do', (a, b) => {
    const [x, y] = [a, b].map((id) => storedPosition({ time: TIME, eventId: id })) as [string, string];
    expect(positionAtOrAfter(x, y)).toBe(Buffer.compare(Buffer.from(x), Buffer.from(y)) >= 0);
  });
});

describe.each(DOORS)('idempotency keys through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it('keeps ids with different lone surrogates apart', async () => {
    const { d, seen } = await start({});
    const base = { ...buildEvent('ag.hid_org.created'), source: `/service/${'s'.repeat(200)}` };
    const answers = [
      await d.send(tokenDelivery(TOKEN, { ...base, id: '\ud800' })),
      await d.send(tokenDelivery(TOKEN, { ...base, id: '\udfff' })),
    ];
    expect(answers.map((a) => JSON.parse(a.text).status)).toEqual(['unhandled', 'unhandled']);
    expect(seen).toHaveLength(2);
  });

  it('keeps events apart whose source and id join the same way, and hashes a 900 KB id into a short key', async () => {
    const memory = new MemoryStore();
    const keys: string[] = [];
    const store: IdempotencyStore = {
      claim: (key, token, lease) => (keys.push(key), memory.claim(key, token, lease)),
      markDone: (key, token, retention) => memory.markDone(key, token, retention),
      release: (key, token) => memory.release(key, token),
      get: (key) => memory.get(key),
    };
    const ran: string[] = [];
    const router = createEventRouter().on('ag.hid_org.created', (event) => void ran.push(event.source));
    const { d } = await start({ router, idempotency: store });
    const a = { ...buildEvent('ag.hid_org.created'), source: 'src\u0000X', id: 'Y' };
    const b = { ...buildEvent('ag.hid_org.created'), source: 'src', id: 'X\u0000Y' };
    const big = { ...buildEvent('ag.hid_org.created'), id: 'i'.repeat(900_000) };
    const answers = [
      await d.send(tokenDelivery(TOKEN, a)),
      await d.send(tokenDelivery(TOKEN, b)),
      await d.send(tokenDelivery(TOKEN, big)),
    ];
    expect(answers.map((r) => JSON.parse(r.text).status)).toEqual(['processed', 'processed', 'processed']);
    expect(ran).toHaveLength(3);
    expect(new Set(keys).size).toBe(3);
    expect(Math.max(...keys.map((k) => k.length))).toBeLessThan(100);
    memory.close();
  });
});
