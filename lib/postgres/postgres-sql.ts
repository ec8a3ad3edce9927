/** The statements a {@link PostgresStore} runs, built once per table name. */
export interface PostgresSql {
  setup: string;
  /** $1 key, $2 token, $3 lease ms → one row: 0 claimed, 1 busy, 2 done; no row: busy. */
  claim: string;
  /** $1 key, $2 token, $3 retention ms → one row when applied, none when another token holds the key. */
  markDone: string;
  /** $1 key, $2 token. */
  release: string;
  /** $1 key → `done` of a live row, or no row. */
  get: string;
  /** $1 batch size → deletes up to that many expired rows. */
  cleanup: string;
}

const ms = (param: string) => `now() + ${param}::float8 * interval '1 millisecond'`;

/**
 * The SQL to create the store's table by hand, for those who migrate with their own tool; the same
 * that `setup()` runs.
 */
export function postgresSetupSql(table = 'service_webhooks_idempotency'): string {
  const index = `${table.slice(table.lastIndexOf('.') + 1)}_expires_at_idx`;
  return `CREATE TABLE IF NOT EXISTS ${table} (
  key text PRIMARY KEY,
  token text NOT NULL,
  done boolean NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${index} ON ${table} (expires_at);`;
}

export function postgresSql(table: string): PostgresSql {
  return {
    // One implicit transaction (a multi-statement simple query): the lock keeps instances that start
    // together from racing on CREATE TABLE IF NOT EXISTS, which is not safe against itself.
    setup: `SELECT pg_advisory_xact_lock(hashtext('service-webhooks setup ${table}'));
${postgresSetupSql(table)}`,
    // The upsert takes a free or expired key. When it takes nothing the outer SELECT says why; a
    // row it cannot see yet (claimed at the same instant by another statement) reads as busy, and
    // an expired row is never read as done, so a stale snapshot can only ever say "busy".
    claim: `WITH claimed AS (
  INSERT INTO ${table} AS t (key, token, done, expires_at) VALUES ($1, $2, false, ${ms('$3')})
  ON CONFLICT (key) DO UPDATE SET token = excluded.token, done = false, expires_at = excluded.expires_at
  WHERE t.expires_at <= now()
  RETURNING 0 AS result
)
SELECT result FROM claimed
UNION ALL
SELECT CASE WHEN done THEN 2 ELSE 1 END FROM ${table}
WHERE key = $1 AND expires_at > now() AND NOT EXISTS (SELECT 1 FROM claimed)`,
    // Fenced: applies to a free, expired or done key, or one this token holds; another token's live
    // lease is left alone (that delivery's outcome decides).
    markDone: `INSERT INTO ${table} AS t (key, token, done, expires_at) VALUES ($1, $2, true, ${ms('$3')})
ON CONFLICT (key) DO UPDATE SET token = excluded.token, done = true, expires_at = excluded.expires_at
WHERE t.token = excluded.token OR t.done OR t.expires_at <= now()
RETURNING 1 AS applied`,
    release: `DELETE FROM ${table} WHERE key = $1 AND token = $2 AND NOT done`,
    get: `SELECT done FROM ${table} WHERE key = $1 AND expires_at > now()`,
    // SKIP LOCKED: two instances cleaning at once share the work instead of waiting on each other.
    cleanup: `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
  SELECT ctid FROM ${table} WHERE expires_at <= now() LIMIT $1 FOR UPDATE SKIP LOCKED
)) AND expires_at <= now()`,
  };
}
