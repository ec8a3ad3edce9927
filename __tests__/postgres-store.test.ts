import { Client, Pool } from 'pg';
import { OptionsError } from '../lib/options-error';
import { PostgresStore, postgresSetupSql, type PostgresQueryable } from 'service-webhooks/postgres';
import { runStoreContract } from 'service-webhooks/testing';
import { freePort } from './support/server-binary';
import { describeWithPostgres, startPostgresServer, type PostgresServer } from './support/postgres-server';
import { receiverOn } from './support/store-receiver';
import { eventually } from './support/inbox-engines';

const HOUR = 60 * 60 * 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithPostgres('PostgresStore on a real PostgreSQL', () => {
  let server: PostgresServer;
  let pool: Pool;
  const pools: Pool[] = [];
  beforeAll(async () => {
    server = await startPostgresServer();
    pool = new Pool({ connectionString: server.url, max: 20 });
    pool.on('error', () => undefined); // an idle connection cut at shutdown is not a failure
    pools.push(pool);
  }, 60_000);
  afterAll(async () => {
    for (const p of pools) await p.end();
    await server?.close();
  }, 30_000);

  runStoreContract(
    'PostgresStore over pg',
    async () => {
      const store = new PostgresStore({ pool, table: 'contract_store' });
      await store.setup();
      return store;
    },
    {
      makeUnavailableStore: async () => {
        const down = new Pool({ host: '127.0.0.1', port: await freePort(), connectionTimeoutMillis: 1_000 });
        down.on('error', () => undefined);
        pools.push(down);
        return new PostgresStore({ pool: down });
      },
    },
  );

  /** The pool, counting the statements the store sends. */
  function counting(): PostgresQueryable & { texts: string[] } {
    const texts: string[] = [];
    return { texts, query: (text, values) => (texts.push(text), pool.query(text, values)) };
  }

  it('claims with one statement, an INSERT … ON CONFLICT … DO UPDATE … WHERE lease expired', async () => {
    const counted = counting();
    const store = new PostgresStore({ pool: counted, table: 'one_statement' });
    await store.setup();
    counted.texts.length = 0;
    await store.claim('k', 't', HOUR);
    await store.markDone('k', 't', HOUR);
    expect(counted.texts).toHaveLength(2);
    expect(counted.texts[0]).toMatch(
      /INSERT INTO one_statement[\s\S]*ON CONFLICT \(key\) DO UPDATE[\s\S]*WHERE t\.expires_at <= now\(\)[\s\S]*RETURNING/,
    );
  });

  it('sets up its table safely from many instances at once, and again', async () => {
    const stores = Array.from({ length: 8 }, () => new PostgresStore({ pool, table: 'raced_setup' }));
    await Promise.all(stores.map((s) => s.setup()));
    await stores[0]?.setup();
    const { rows } = await pool.query(
      "SELECT indexname FROM pg_indexes WHERE tablename = 'raced_setup' ORDER BY 1",
    );
    expect(rows.map((r: { indexname: string }) => r.indexname)).toEqual([
      'raced_setup_expires_at_idx',
      'raced_setup_pkey',
    ]);
  });

  it('works in a schema of its own, with the SQL shown for migrations', async () => {
    await pool.query('CREATE SCHEMA IF NOT EXISTS hooks');
    await pool.query(postgresSetupSql('hooks.idempotency'));
    const store = new PostgresStore({ pool, table: 'hooks.idempotency' });
    expect(await store.claim('k', 't', HOUR)).toBe('claimed');
    expect((await pool.query('SELECT count(*)::int AS n FROM hooks.idempotency')).rows[0]).toEqual({ n: 1 });
  });

  it('deletes expired rows in bounded batches, and only expired ones', async () => {
    const store = new PostgresStore({ pool, table: 'cleanup_batches', cleanupBatchSize: 10 });
    await store.setup();
    for (let i = 0; i < 25; i++) await store.markDone(`old${i}`, 't', 1);
    await store.markDone('live', 't', HOUR);
    await sleep(20);
    const deleted = [
      await store.cleanup(),
      await store.cleanup(),
      await store.cleanup(),
      await store.cleanup(),
    ];
    expect(deleted).toEqual([10, 10, 5, 0]);
    expect(await store.get('live')).toBe('done');
  });

  it('cleans up by itself once cleanupIntervalMs has passed, off the request path', async () => {
    const store = new PostgresStore({ pool, table: 'cleanup_auto', cleanupIntervalMs: 50 });
    await store.setup();
    for (let i = 0; i < 5; i++) await store.markDone(`old${i}`, 't', 1);
    await sleep(60);
    await store.claim('trigger', 't', HOUR);
    const count = async () =>
      (await pool.query('SELECT count(*)::int AS n FROM cleanup_auto')).rows[0].n as number;
    for (let i = 0; i < 50 && (await count()) > 1; i++) await sleep(20);
    expect(await count()).toBe(1);
  });

  it('compares entity positions byte by byte in a database whose own collation is not C', async () => {
    // ICU's English collation puts 'a' before 'B'; bytes put 'B' (0x42) first, as Redis and MemoryStore do.
    await pool.query(
      "CREATE DATABASE ordering_icu TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en' LOCALE 'C'",
    );
    const icu = new Pool({ connectionString: server.url.replace(/\/postgres$/, '/ordering_icu'), max: 2 });
    icu.on('error', () => undefined);
    pools.push(icu);
    expect((await icu.query("SELECT 'a' < 'B' AS icu")).rows[0]).toEqual({ icu: true });
    const store = new PostgresStore({ pool: icu });
    await store.setup();
    const at = (eventId: string) => ({ time: '1'.repeat(22), eventId });
    expect(await store.leaseEntity('pass', 't1', HOUR, at('a'))).toBe('leased');
    await store.advanceEntity('pass', 't1', at('a'), HOUR);
    expect(await store.leaseEntity('pass', 't2', HOUR, at('B'))).toBe('stale');
  });

  it('deletes expired entity rows with the rest, and only expired ones', async () => {
    const store = new PostgresStore({ pool, table: 'cleanup_entities' });
    await store.setup();
    const at = { time: '1'.repeat(22), eventId: 'e' };
    for (let i = 0; i < 3; i++) await store.advanceEntity(`old${i}`, 't', at, 1);
    await store.advanceEntity('live', 't', at, HOUR);
    await store.markDone('old-event', 't', 1);
    await sleep(20);
    expect(await store.cleanup()).toBe(4);
    const left = await pool.query('SELECT key FROM cleanup_entities_entities');
    expect(left.rows).toEqual([{ key: 'live' }]);
  });

  it("claimHandlers taken from a holder that released while it waited still sees that holder's recorded handlers", async () => {
    const counted = counting();
    const store = new PostgresStore({ pool: counted, table: 'taken_over' });
    await store.setup();
    // A new event and a retry after a release: the claim, then its own read of what was recorded.
    counted.texts.length = 0;
    expect(await store.claimHandlers('fresh', 'a', HOUR)).toEqual({
      result: 'claimed',
      succeeded: [],
      attempt: 1,
    });
    await store.release('fresh', 'a');
    expect((await store.claimHandlers('fresh', 'b', HOUR)).result).toBe('claimed');
    expect(counted.texts).toHaveLength(5);

    expect(await store.claimHandlers('k', 'a', HOUR)).toMatchObject({ result: 'claimed' });
    // The holder's release, held open: the next claim's statement takes its snapshot, then waits.
    const holder = new Client({ connectionString: server.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('DELETE FROM taken_over WHERE key = $1', ['k']);
      const next = store.claimHandlers('k', 'b', HOUR);
      await eventually('the claim waiting for the release', async () => {
        const { rows } = await pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO taken_over %'",
        );
        return rows[0]!.n > 0;
      });
      // A success the holder recorded after that snapshot, before its release committed.
      await pool.query(
        "INSERT INTO taken_over_handlers (key, handler, expires_at) VALUES ('k', 'crm', now() + interval '1 hour')",
      );
      await holder.query('COMMIT');
      expect(await next).toEqual({ result: 'claimed', succeeded: ['crm'], attempt: 1 });
    } finally {
      await holder.end();
    }
  });

  it('claimHandlers whose statement stalled while another holder claimed, recorded and released still sees what it recorded', async () => {
    const store = new PostgresStore({ pool, table: 'stalled_claim' });
    await store.setup();
    // The stall a busy machine can give a backend between its statement's snapshot and its insert,
    // made on purpose: a trigger that waits half a second before each insert of a session so marked.
    await pool.query(`CREATE FUNCTION stalled_claim_wait() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF current_setting('sw_test.stall', true) = 'on' THEN PERFORM pg_sleep(0.5); END IF; RETURN NEW; END $$`);
    await pool.query(
      'CREATE TRIGGER stalled_claim_wait BEFORE INSERT ON stalled_claim FOR EACH ROW EXECUTE FUNCTION stalled_claim_wait()',
    );
    const stalled = new Pool({ connectionString: server.url, max: 1, options: '-c sw_test.stall=on' });
    stalled.on('error', () => undefined);
    pools.push(stalled);
    const late = new PostgresStore({ pool: stalled, table: 'stalled_claim' }).claimHandlers(
      'k',
      'late',
      HOUR,
    );
    await eventually('the late claim stalled in its insert', async () => {
      const { rows } = await pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%INSERT INTO stalled_claim %' AND state = 'active' AND pid <> pg_backend_pid()",
      );
      return rows[0]!.n > 0;
    });
    // Meanwhile another delivery runs the event: claims it, records a handler, fails another, lets go.
    expect((await store.claimHandlers('k', 'first', HOUR)).result).toBe('claimed');
    expect(await store.markHandlerDone('k', 'first', 'crm', HOUR)).toBe(true);
    await store.release('k', 'first', HOUR);
    expect(await late).toEqual({ result: 'claimed', succeeded: ['crm'], attempt: 2 });
  });

  it('says to run setup() when its table is missing', async () => {
    const store = new PostgresStore({ pool, table: 'never_set_up' });
    await expect(store.claim('k', 't', HOUR)).rejects.toThrow(
      /\[service-webhooks\] PostgresStore: claim failed: relation "never_set_up" does not exist \(the table does not exist: run await store.setup\(\)/,
    );
  });
});

describeWithPostgres('a receiver on PostgresStore while PostgreSQL goes away and comes back', () => {
  it('503 at once while it is down, no handler run; processed once it is back', async () => {
    const postgres = await startPostgresServer();
    const pool = new Pool({ connectionString: postgres.url, connectionTimeoutMillis: 1_000 });
    pool.on('error', () => undefined);
    try {
      const store = new PostgresStore({ pool });
      await store.setup();
      const { handled, send, sendUntilAcknowledged, timed } = receiverOn(store);
      expect((await send('before')).status).toBe(200);
      await postgres.stop();
      const during = await timed('during');
      expect([during.answer.status, during.answer.headers['retry-after']]).toEqual([503, '30']);
      expect(during.ms).toBeLessThan(2_000);
      expect(handled).toEqual(['before']);

      await postgres.start();
      const after = await sendUntilAcknowledged('during', 50);
      expect([after.status, after.body.status]).toEqual([200, 'processed']);
      expect((await send('before')).body.status).toBe('duplicate');
      expect(handled).toEqual(['before', 'during']);
    } finally {
      await pool.end();
      await postgres.close();
    }
  }, 90_000);
});

describe('PostgresStore options', () => {
  const pool: PostgresQueryable = { query: async () => ({ rows: [] }) };
  it.each([
    ['no options', undefined, /takes an options object/],
    ['no pool', {}, /pool must have query/],
    ['a pool without query', { pool: {} }, /pool must have query/],
    ['a table with a quote', { pool, table: 'x"; DROP TABLE y; --' }, /table must be a lower-case name/],
    ['an upper-case table', { pool, table: 'Hooks' }, /table must be a lower-case name/],
    ['a table name too long', { pool, table: 'x'.repeat(41) }, /at most 40/],
    [
      'cleanupIntervalMs 0',
      { pool, cleanupIntervalMs: 0 },
      /cleanupIntervalMs must be a positive whole number/,
    ],
    [
      'cleanupBatchSize 1.5',
      { pool, cleanupBatchSize: 1.5 },
      /cleanupBatchSize must be a positive whole number/,
    ],
    ['a misspelt option', { pool, tabel: 'x' }, /unknown option "tabel"; did you mean "table"\?/],
  ])('throws OptionsError at construction for %s', (_name, options, message) => {
    const build = () => new PostgresStore(options as never);
    expect(build).toThrow(OptionsError);
    expect(build).toThrow(message);
  });

  it('takes a pg Pool as it is', () => {
    const real: PostgresQueryable = new Pool();
    expect(() => new PostgresStore({ pool: real })).not.toThrow();
    return (real as Pool).end();
  });
});
