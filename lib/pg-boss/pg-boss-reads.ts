import type { InboxStatus } from '../inbox/inbox';
import { isDeadLetterData, type DeadLetterData } from './dead-letter-data';
import type { PgBoss } from './load-pg-boss';

// The inbox's only SQL: reads pg-boss's public API has no form for (a count split by start time, a
// page of dead letters filtered by their data and ordered by failure). Every write goes through
// pg-boss's API. These name pg-boss's own columns and its job_state enum order, so they are checked
// against the schema version of the database before the first read (`checkReadSchema`).

/** The pg-boss schema versions these reads were written against (pg-boss 12.38). */
export const READ_SCHEMA_VERSIONS: readonly number[] = [46];

/**
 * Rejects, saying what to do, when the database's pg-boss schema is not one these reads know: a
 * pg-boss that moved its columns would otherwise be read wrong in silence.
 */
export async function checkReadSchema(boss: PgBoss, schema: string, where: string): Promise<void> {
  const version = await boss.schemaVersion();
  if (version !== null && READ_SCHEMA_VERSIONS.includes(version)) return;
  throw new Error(
    `[service-webhooks] ${where}: the pg-boss schema "${schema}" is at version ${version ?? 'none'}, and this service-webhooks reads version ${READ_SCHEMA_VERSIONS.join(' or ')} (pg-boss 12.38); install the pg-boss version service-webhooks names (npm install pg-boss@12.38), or a service-webhooks that knows yours`,
  );
}

/** `isDeadLetterData`'s checks in SQL, on a job row's `data`: a row failing them is no dead letter. */
export const DEAD_LETTER_SHAPE = `jsonb_typeof(data->'failedAt') = 'string'
        AND jsonb_typeof(data->'delivery'->'key') = 'string'
        AND jsonb_typeof(data->'delivery'->'id') = 'string'
        AND jsonb_typeof(data->'delivery'->'type') = 'string'
        AND jsonb_typeof(data->'delivery'->'envelope') = 'string'`;

/** A dead letter as a job of the `<name>.dead` queue. */
export interface DeadJob {
  id: string;
  data: DeadLetterData;
}

/** Where a dead letter stands: its job id and when it failed (a {@link DeadJob} is one). */
export interface DeadJobPosition {
  id: string;
  data: { failedAt: string };
}

/** Which dead letters to read, newest failure first. */
export interface DeadJobQuery {
  /** Only this event (its CloudEvent `id`). */
  eventId?: string | undefined;
  /** Only events of this type. */
  type?: string | undefined;
  /** Only those that failed at or after this time. */
  since?: Date | undefined;
  /**
   * Only those that may be of this issue: written with it, or from before issues were written
   * (`inIssue` tells those apart after the read, so a page is cut by the limit only).
   */
  issue?: string | undefined;
  /** Only those on which this handler ran without a recorded success. */
  handler?: string | undefined;
  /** At most this many. */
  limit: number;
  /** Only those after this one in the order read: the next page of a walk over many. */
  after?: DeadJobPosition | undefined;
  /**
   * Only those before this one in the newest-failure-first order (not with `byId`): the page before,
   * read nearest first and given back newest first.
   */
  before?: DeadJobPosition | undefined;
  /**
   * Read in id order (the `(name, id)` primary key's), not newest failure first: each page is an
   * index range after the last, so a walk over all of them (a replay) reads each row once, where
   * the failure order sorts every dead letter again for every page.
   */
  byId?: boolean;
  /**
   * Only those made at or before this database time (`databaseNow()`): a walk in id order skips a letter
   * that died again after it began, which a random id could otherwise place ahead of it, replaying
   * one event twice in one walk.
   */
  madeBy?: string | undefined;
}

/** The database's clock now, as a walk's `madeBy`. */
export async function databaseNow(boss: PgBoss): Promise<string> {
  const { rows } = await boss.getDb().executeSql('SELECT now()::text AS now');
  return (rows as { now: string }[])[0]?.now ?? new Date().toISOString();
}

/**
 * One page of dead letters, filtered, ordered and limited by PostgreSQL: however many there are,
 * no more than `limit` rows come back. Every value is a bound parameter; only the schema, checked
 * at construction, is written into the statement (pg-boss does the same). `failedAt` is an ISO 8601
 * string in UTC (`toISOString`), so comparing it byte by byte (`COLLATE "C"`) orders it by time.
 * The shape checks are `isDeadLetterData`'s, so a page is never shortened after the limit.
 * `state < 'active'` is pg-boss's enum order (created, retry): the jobs still queued, which in the
 * dead queue, worked by nobody, is every dead letter not yet replayed.
 */
export async function findDeadJobs(
  boss: PgBoss,
  schema: string,
  dead: string,
  query: DeadJobQuery,
): Promise<DeadJob[]> {
  const backwards = query.before !== undefined && query.byId !== true;
  const { rows } = await boss.getDb().executeSql(
    `SELECT id, data FROM ${schema}.job
      WHERE name = $1 AND state < 'active'
        AND ${DEAD_LETTER_SHAPE}
        AND ($2::text IS NULL OR data->'delivery'->>'id' = $2::text)
        AND ($3::text IS NULL OR data->'delivery'->>'type' = $3::text)
        AND ($4::text IS NULL OR data->>'failedAt' COLLATE "C" >= $4::text)
        AND ($8::text IS NULL OR jsonb_typeof(data->'issues') IS DISTINCT FROM 'array'
             OR data->'issues' @> jsonb_build_array(jsonb_build_object('key', $8::text)))
        AND ($9::text IS NULL OR data->'handlers'->$9::text->'ok' = 'false'::jsonb)
        AND ($10::timestamptz IS NULL OR created_on <= $10::timestamptz)
        AND ${
          query.byId === true
            ? `$5::text IS NULL AND ($6::uuid IS NULL OR id > $6::uuid)
        AND $11::text IS NULL AND $12::uuid IS NULL
      ORDER BY id`
            : `($5::text IS NULL OR data->>'failedAt' COLLATE "C" < $5::text
             OR (data->>'failedAt' = $5::text AND id < $6::uuid))
        AND ($11::text IS NULL OR data->>'failedAt' COLLATE "C" > $11::text
             OR (data->>'failedAt' = $11::text AND id > $12::uuid))
      ORDER BY data->>'failedAt' COLLATE "C" ${backwards ? 'ASC' : 'DESC'}, id ${backwards ? 'ASC' : 'DESC'}`
        }
      LIMIT $7::int`,
    [
      dead,
      query.eventId ?? null,
      query.type ?? null,
      query.since?.toISOString() ?? null,
      query.byId === true ? null : (query.after?.data.failedAt ?? null),
      query.after?.id ?? null,
      query.limit,
      query.issue ?? null,
      query.handler ?? null,
      query.madeBy ?? null,
      query.before?.data.failedAt ?? null,
      query.before?.id ?? null,
    ],
  );
  const jobs = (rows as { id: string; data: unknown }[]).filter((row): row is DeadJob =>
    isDeadLetterData(row.data),
  );
  // The page before was read nearest first, so that the limit keeps the nearest ones.
  return backwards ? jobs.reverse() : jobs;
}

/**
 * The queue's figures counted now, in one statement, rather than read from pg-boss's queue cache
 * (refreshed by its monitor, so seconds behind). A queued job whose start is still ahead waits out a
 * backoff (or a busy try's put-back): `delayed`, apart from those a worker may take now. The clock
 * is the database's, as pg-boss's own fetch uses.
 */
export async function readStatus(
  boss: PgBoss,
  schema: string,
  name: string,
  dead: string,
): Promise<Omit<InboxStatus, 'paused'>> {
  const { rows } = await boss.getDb().executeSql(
    `SELECT count(*) FILTER (WHERE name = $1 AND state < 'active' AND start_after <= now()) AS waiting,
            count(*) FILTER (WHERE name = $1 AND state < 'active' AND start_after > now()) AS delayed,
            count(*) FILTER (WHERE name = $1 AND state = 'active') AS active,
            count(*) FILTER (WHERE name = $2 AND state < 'active') AS dead,
            extract(epoch FROM now() - min(created_on)
              FILTER (WHERE name = $1 AND state < 'active' AND start_after <= now())) * 1000 AS oldest,
            extract(epoch FROM now() - min(created_on)
              FILTER (WHERE name = $1 AND state < 'active' AND start_after > now())) * 1000 AS oldest_delayed
       FROM ${schema}.job WHERE name IN ($1, $2)`,
    [name, dead],
  );
  const row = (rows[0] ?? {}) as Record<string, string | number | null | undefined>;
  const age = (value: string | number | null | undefined) =>
    value == null ? null : Math.max(0, Math.round(Number(value)));
  return {
    waiting: Number(row.waiting ?? 0),
    delayed: Number(row.delayed ?? 0),
    active: Number(row.active ?? 0),
    dead: Number(row.dead ?? 0),
    oldestAgeMs: age(row.oldest),
    oldestDelayedAgeMs: age(row.oldest_delayed),
  };
}
