import type { InboxStatus } from '../inbox/inbox';
import type { PgBoss } from './load-pg-boss';

/**
 * The queue's figures counted now, in one statement, rather than read from pg-boss's queue cache
 * (refreshed by its monitor, so seconds behind).
 */
export async function pgBossStatus(
  boss: PgBoss,
  schema: string,
  name: string,
  dead: string,
): Promise<InboxStatus> {
  const { rows } = await boss.getDb().executeSql(
    `SELECT count(*) FILTER (WHERE name = $1 AND state < 'active') AS waiting,
            count(*) FILTER (WHERE name = $1 AND state = 'active') AS active,
            count(*) FILTER (WHERE name = $2 AND state < 'active') AS dead,
            min(created_on) FILTER (WHERE name = $1 AND state < 'active') AS oldest
       FROM ${schema}.job WHERE name IN ($1, $2)`,
    [name, dead],
  );
  const row = (rows[0] ?? {}) as { waiting?: string; active?: string; dead?: string; oldest?: Date | null };
  return {
    waiting: Number(row.waiting ?? 0),
    active: Number(row.active ?? 0),
    dead: Number(row.dead ?? 0),
    oldestAgeMs: row.oldest == null ? null : Math.max(0, Date.now() - new Date(row.oldest).getTime()),
  };
}
