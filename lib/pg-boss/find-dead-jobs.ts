import { isDeadLetterData, type DeadLetterData } from './dead-letter-data';
import type { PgBoss } from './load-pg-boss';

/** A dead letter as a job of the `<name>.dead` queue. */
export interface DeadJob {
  id: string;
  data: DeadLetterData;
}

/** Which dead letters to read, newest failure first. */
export interface DeadJobQuery {
  /** Only this event (its CloudEvent `id`). */
  eventId?: string | undefined;
  /** Only events of this type. */
  type?: string | undefined;
  /** Only those that failed at or after this time. */
  since?: Date | undefined;
  /** At most this many. */
  limit: number;
  /** Only those after this one in the order read: the next page of a walk over many. */
  after?: DeadJob | undefined;
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
  const { rows } = await boss.getDb().executeSql(
    `SELECT id, data FROM ${schema}.job
      WHERE name = $1 AND state < 'active'
        AND jsonb_typeof(data->'failedAt') = 'string'
        AND jsonb_typeof(data->'delivery'->'key') = 'string'
        AND jsonb_typeof(data->'delivery'->'id') = 'string'
        AND jsonb_typeof(data->'delivery'->'type') = 'string'
        AND jsonb_typeof(data->'delivery'->'envelope') = 'string'
        AND ($2::text IS NULL OR data->'delivery'->>'id' = $2::text)
        AND ($3::text IS NULL OR data->'delivery'->>'type' = $3::text)
        AND ($4::text IS NULL OR data->>'failedAt' COLLATE "C" >= $4::text)
        AND ($5::text IS NULL OR data->>'failedAt' COLLATE "C" < $5::text
             OR (data->>'failedAt' = $5::text AND id < $6::uuid))
      ORDER BY data->>'failedAt' COLLATE "C" DESC, id DESC
      LIMIT $7::int`,
    [
      dead,
      query.eventId ?? null,
      query.type ?? null,
      query.since?.toISOString() ?? null,
      query.after?.data.failedAt ?? null,
      query.after?.id ?? null,
      query.limit,
    ],
  );
  return (rows as { id: string; data: unknown }[]).filter((row): row is DeadJob =>
    isDeadLetterData(row.data),
  );
}
