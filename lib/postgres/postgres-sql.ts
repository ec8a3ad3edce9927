/** The statements a {@link PostgresStore} runs, built once per table name. */
export interface PostgresSql {
  setup: string;
  /** $1 key, $2 token, $3 lease ms → one row: 0 claimed, 1 busy, 2 done; no row: busy. */
  claim: string;
  /**
   * $1 key → `handlers`: the names recorded for the key; `attempt`: 1 plus its failed runs counted.
   * Read in a statement after the claim's, never in it: see {@link PostgresStore.claimHandlers}.
   */
  handlersOf: string;
  /** $1 key, $2 token, $3 handler, $4 retention ms → one row when this token's live lease recorded it, else none. */
  markHandlerDone: string;
  /** $1 key, $2 token, $3 retention ms → one row when applied, none when another token holds the key. */
  markDone: string;
  /** $1 key, $2 token. */
  release: string;
  /** $1 key, $2 token, $3 retention ms: as release, counting the failed run (a row `\x01<token>` in the handlers table). */
  releaseCounted: string;
  /** $1 key, $2 token, $3 lease ms → one row when this token's live lease was extended, else none. */
  renewLease: string;
  /** $1 key → `done` of a live row, or no row. */
  get: string;
  /** $1 batch size → deletes up to that many expired rows. */
  cleanup: string;
  /** $1 key, $2 token, $3 lease ms, $4 position → one row: 0 leased, 1 stale, 2 busy; no row: busy. */
  leaseEntity: string;
  /** $1 key, $2 token, $3 position, $4 retention ms → one row, `released` false when another token holds it. */
  advanceEntity: string;
  /** $1 key, $2 token. */
  releaseEntity: string;
  /** $1 key, $2 token, $3 lease ms → one row when this token's live entity lease was extended, else none. */
  renewEntity: string;
  /** $1 batch size → deletes up to that many expired entity rows. */
  cleanupEntities: string;
  /** $1 batch size → deletes up to that many expired handler rows. */
  cleanupHandlers: string;
}

const ms = (param: string) => `now() + ${param}::float8 * interval '1 millisecond'`;

/**
 * The SQL to create the store's table by hand, for those who migrate with their own tool; the same
 * that `setup()` runs.
 */
export function postgresSetupSql(table = 'service_webhooks_idempotency'): string {
  const index = `${table.slice(table.lastIndexOf('.') + 1)}_expires_at_idx`;
  const entities = entityTable(table);
  const entityIndex = `${entities.slice(entities.lastIndexOf('.') + 1)}_expires_at_idx`;
  const handlers = handlerTable(table);
  const handlerIndex = `${handlers.slice(handlers.lastIndexOf('.') + 1)}_expires_at_idx`;
  // Positions compare byte by byte (COLLATE "C"), as the Redis store compares them, whatever the
  // database's default collation.
  return `CREATE TABLE IF NOT EXISTS ${table} (
  key text PRIMARY KEY,
  token text NOT NULL,
  done boolean NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${index} ON ${table} (expires_at);
CREATE TABLE IF NOT EXISTS ${entities} (
  key text PRIMARY KEY,
  token text,
  lease_until timestamptz,
  position text COLLATE "C",
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${entityIndex} ON ${entities} (expires_at);
CREATE TABLE IF NOT EXISTS ${handlers} (
  key text NOT NULL,
  handler text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key, handler)
);
CREATE INDEX IF NOT EXISTS ${handlerIndex} ON ${handlers} (expires_at);`;
}

/** The table of handlers' recorded successes, one row per event and handler, beside the store's own. */
const handlerTable = (table: string) => `${table}_handlers`;

/** The table of entity leases and newest positions, beside the store's own. */
const entityTable = (table: string) => `${table}_entities`;

/** `DELETE` up to $1 expired rows; SKIP LOCKED, so two instances cleaning at once share the work. */
const cleanupOf = (table: string) => `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
  SELECT ctid FROM ${table} WHERE expires_at <= now() LIMIT $1 FOR UPDATE SKIP LOCKED
)) AND expires_at <= now()`;

/**
 * The upsert takes a free or expired key. When it takes nothing the outer SELECT says why; a row it
 * cannot see yet (claimed at the same instant by another statement) reads as busy, and an expired
 * row is never read as done, so a stale snapshot can only ever say "busy".
 */
function claimOf(table: string): string {
  return `WITH claimed AS (
  INSERT INTO ${table} AS t (key, token, done, expires_at) VALUES ($1, $2, false, ${ms('$3')})
  ON CONFLICT (key) DO UPDATE SET token = excluded.token, done = false, expires_at = excluded.expires_at
  WHERE t.expires_at <= now()
  RETURNING 0 AS result
)
SELECT result FROM claimed
UNION ALL
SELECT CASE WHEN done THEN 2 ELSE 1 END FROM ${table}
WHERE key = $1 AND expires_at > now() AND NOT EXISTS (SELECT 1 FROM claimed)`;
}

export function postgresSql(table: string): PostgresSql {
  const entities = entityTable(table);
  const handlers = handlerTable(table);
  // The handlers recorded for key $1, and 1 plus its failed runs counted. A failed run is a row named
  // chr(1) and its token: no handler's name has a control character.
  const recorded = `ARRAY(SELECT handler FROM ${handlers}
  WHERE key = $1 AND expires_at > now() AND left(handler, 1) <> chr(1) ORDER BY handler)`;
  const attempt = `1 + (SELECT count(*) FROM ${handlers}
  WHERE key = $1 AND expires_at > now() AND left(handler, 1) = chr(1))`;
  return {
    // One implicit transaction (a multi-statement simple query): the lock keeps instances that start
    // together from racing on CREATE TABLE IF NOT EXISTS, which is not safe against itself.
    setup: `SELECT pg_advisory_xact_lock(hashtext('service-webhooks setup ${table}'));
${postgresSetupSql(table)}`,
    claim: claimOf(table),
    handlersOf: `SELECT ${recorded} AS handlers, ${attempt} AS attempt`,
    // Fenced by the event row's live lease, locked FOR SHARE so a takeover waits for it (and this
    // statement then sees the new token and records nothing).
    markHandlerDone: `INSERT INTO ${handlers} AS h (key, handler, expires_at)
SELECT key, $3, ${ms('$4')} FROM ${table}
WHERE key = $1 AND token = $2 AND NOT done AND expires_at > now() FOR SHARE
ON CONFLICT (key, handler) DO UPDATE SET expires_at = GREATEST(h.expires_at, excluded.expires_at)
RETURNING 1 AS applied`,
    // Fenced: applies to a free, expired or done key, or one this token holds; another token's live
    // lease is left alone (that delivery's outcome decides).
    markDone: `INSERT INTO ${table} AS t (key, token, done, expires_at) VALUES ($1, $2, true, ${ms('$3')})
ON CONFLICT (key) DO UPDATE SET token = excluded.token, done = true, expires_at = excluded.expires_at
WHERE t.token = excluded.token OR t.done OR t.expires_at <= now()
RETURNING 1 AS applied`,
    release: `DELETE FROM ${table} WHERE key = $1 AND token = $2 AND NOT done`,
    releaseCounted: `WITH freed AS (DELETE FROM ${table} WHERE key = $1 AND token = $2 AND NOT done RETURNING key)
INSERT INTO ${handlers} AS h (key, handler, expires_at) SELECT key, chr(1) || $2, ${ms('$3')} FROM freed
ON CONFLICT (key, handler) DO NOTHING`,
    renewLease: `UPDATE ${table} SET expires_at = ${ms('$3')}
WHERE key = $1 AND token = $2 AND NOT done AND expires_at > now()
RETURNING 1 AS renewed`,
    get: `SELECT done FROM ${table} WHERE key = $1 AND expires_at > now()`,
    cleanup: cleanupOf(table),
    // As claim: the upsert leases a live entity that is free and older than $4, or an expired row
    // (whose position is forgotten); when it takes nothing the outer SELECT says why. A stale
    // snapshot can only say "busy" wrongly, never "stale": positions only ever rise.
    leaseEntity: `WITH leased AS (
  INSERT INTO ${entities} AS e (key, token, lease_until, position, expires_at)
  VALUES ($1, $2, ${ms('$3')}, NULL, ${ms('$3')})
  ON CONFLICT (key) DO UPDATE SET token = excluded.token, lease_until = excluded.lease_until,
    position = CASE WHEN e.expires_at <= now() THEN NULL ELSE e.position END,
    expires_at = CASE WHEN e.expires_at <= now() THEN excluded.expires_at
      ELSE GREATEST(e.expires_at, excluded.expires_at) END
  WHERE e.expires_at <= now()
    OR ((e.position IS NULL OR e.position < $4) AND (e.token IS NULL OR e.lease_until <= now()))
  RETURNING 0 AS result
)
SELECT result FROM leased
UNION ALL
SELECT CASE WHEN position >= $4 THEN 1 ELSE 2 END FROM ${entities}
WHERE key = $1 AND expires_at > now() AND NOT EXISTS (SELECT 1 FROM leased)`,
    // One step: the position only rises, the lease is freed only for its token; `released` is
    // false when another token holds the entity.
    advanceEntity: `INSERT INTO ${entities} AS e (key, token, lease_until, position, expires_at)
VALUES ($1, NULL, NULL, $3, ${ms('$4')})
ON CONFLICT (key) DO UPDATE SET
  position = CASE WHEN e.expires_at <= now() OR e.position IS NULL OR e.position < $3 THEN $3
    ELSE e.position END,
  token = CASE WHEN e.token = $2 OR e.expires_at <= now() THEN NULL ELSE e.token END,
  lease_until = CASE WHEN e.token = $2 OR e.expires_at <= now() THEN NULL ELSE e.lease_until END,
  expires_at = CASE WHEN e.token = $2 OR e.token IS NULL OR e.expires_at <= now() THEN excluded.expires_at
    ELSE GREATEST(e.expires_at, excluded.expires_at) END
RETURNING e.token IS NULL AS released`,
    releaseEntity: `UPDATE ${entities} SET token = NULL, lease_until = NULL WHERE key = $1 AND token = $2`,
    renewEntity: `UPDATE ${entities} SET lease_until = ${ms('$3')}, expires_at = GREATEST(expires_at, ${ms('$3')})
WHERE key = $1 AND token = $2 AND lease_until > now() AND expires_at > now()
RETURNING 1 AS renewed`,
    cleanupEntities: cleanupOf(entities),
    cleanupHandlers: cleanupOf(handlers),
  };
}
