import {
  type InboxIssue,
  issueRefsOf,
  type IssueRef,
  issueTally,
  MAX_TRACKED_ISSUES,
} from '../inbox/inbox-issue';
import type { PgBoss } from './load-pg-boss';
import { DEAD_LETTER_SHAPE } from './pg-boss-reads';

/** One group as PostgreSQL counts it. */
interface IssueRow {
  key: string | null;
  type: string;
  handler: string | null;
  error_name: string | null;
  error_message: string | null;
  legacy_error: string | null;
  count: number | string;
  first_seen: string;
  last_seen: string;
  samples: string[];
}

/**
 * The dead letters of queue `dead` grouped into issues by PostgreSQL, read-only, in one statement:
 * each letter carries the issues it belongs to (`data.issues`, written when it was dead-lettered),
 * so one pass over the dead queue's rows counts them and only the groups come back. A letter from
 * before issues existed is grouped by its raw error there and fingerprinted here. Like every read
 * of pg-boss's table, checked against its schema version first (`checkReadSchema`, at start).
 */
export async function findIssues(
  boss: PgBoss,
  schema: string,
  dead: string,
  query: { since?: Date | undefined; limit: number },
): Promise<InboxIssue[]> {
  const { rows } = await boss.getDb().executeSql(
    `SELECT r.value->>'key' AS key,
            data->'delivery'->>'type' AS type,
            r.value->>'handler' AS handler,
            r.value->'error'->>'name' AS error_name,
            r.value->'error'->>'message' AS error_message,
            CASE WHEN r.value IS NULL THEN data->>'lastError' END AS legacy_error,
            count(*) AS count,
            min(data->>'failedAt' COLLATE "C") AS first_seen,
            max(data->>'failedAt' COLLATE "C") AS last_seen,
            (array_agg(data->'delivery'->>'id' ORDER BY data->>'failedAt' COLLATE "C" DESC, id DESC))[1:5] AS samples
       FROM ${schema}.job
       LEFT JOIN LATERAL jsonb_array_elements(
         CASE WHEN jsonb_typeof(data->'issues') = 'array' THEN data->'issues' ELSE '[]'::jsonb END
       ) AS r(value) ON true
      WHERE name = $1 AND state < 'active'
        AND ${DEAD_LETTER_SHAPE}
      GROUP BY 1, 2, 3, 4, 5, 6
      ORDER BY last_seen DESC
      LIMIT $2::int`,
    [dead, MAX_TRACKED_ISSUES],
  );
  const tally = issueTally();
  for (const row of rows as IssueRow[]) {
    const group = {
      count: Number(row.count),
      firstSeen: new Date(row.first_seen),
      lastSeen: new Date(row.last_seen),
      sampleEventIds: row.samples,
    };
    if (row.key !== null && row.error_name !== null && row.error_message !== null) {
      const ref: IssueRef = {
        key: row.key,
        handler: row.handler,
        error: { name: row.error_name, message: row.error_message },
      };
      tally.add(row.type, ref, group);
    } else {
      const [ref] = issueRefsOf({ delivery: { type: row.type }, lastError: row.legacy_error });
      if (ref !== undefined) tally.add(row.type, ref, group);
    }
  }
  return tally.list(query);
}

/** Whether a dead letter belongs to issue `key`: as written with it, or worked out for an older one. */
export function inIssue(
  data: { delivery: { type: string }; lastError: string | null; issues?: IssueRef[] | undefined },
  key: string,
): boolean {
  const refs = Array.isArray(data.issues) ? data.issues : issueRefsOf(data);
  return refs.some((ref) => ref.key === key);
}
