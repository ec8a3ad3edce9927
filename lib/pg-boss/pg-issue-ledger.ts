import { createHash } from 'node:crypto';
import type { IssueLedger, IssueLevels } from '../inbox/issue-watch';
import { inTransaction } from './in-transaction';
import type { PgBoss } from './load-pg-boss';

/** The queue that holds the alert levels, beside the queue's: one job nobody works. */
export const ISSUES_SUFFIX = '.issues';
/** The levels job is kept this long unchanged; past it, an issue still open is announced again. */
const LEVELS_RETENTION_SECONDS = 90 * 24 * 60 * 60;

/** A UUID made from `text`: the levels job's id, the same in every process. */
function uuidOf(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The alert levels of pg-boss queue `name`, through pg-boss's API and its transactions only: one
 * job (a fixed id) of the queue `<name>.issues` holds them. A check runs in one transaction holding
 * a transaction-scoped advisory lock on the queue's name (`pg_try_advisory_xact_lock`: a worker that
 * does not get it skips this check, and it is let go at commit), reads the job, and writes the next
 * levels with it, so two workers never both announce a change. A check within `everyMs` of the last
 * one stored is skipped: one worker of all checks each time.
 */
export function pgIssueLedger(boss: PgBoss, name: string): IssueLedger {
  const queue = `${name}${ISSUES_SUFFIX}`;
  const id = uuidOf(`service-webhooks issue levels ${name}`);
  let made: Promise<void> | undefined;
  const make = () =>
    (made ??= (async () => {
      if ((await boss.getQueue(queue)) !== null) return;
      await boss.createQueue(queue).catch(async (error: unknown) => {
        if ((await boss.getQueue(queue)) === null) throw error;
      });
    })().catch((error: unknown) => {
      made = undefined;
      throw error;
    }));
  return {
    async step(everyMs, compute) {
      await make();
      let alerts: Awaited<ReturnType<typeof compute>>['alerts'] = [];
      await inTransaction(boss, async (db) => {
        const { rows } = await db.executeSql('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS held', [
          `service-webhooks:issues:${name}`,
        ]);
        if ((rows[0] as { held?: boolean } | undefined)?.held !== true) return false;
        const [job] = await boss.findJobs<IssueLevels>(queue, { id, db });
        const stored = job?.data;
        if (stored !== undefined && Date.now() - stored.checkedAt < everyMs * 0.9) return false;
        const step = await compute(stored);
        if (job === undefined)
          await boss.send(queue, step.next, { id, retentionSeconds: LEVELS_RETENTION_SECONDS, db });
        else await boss.update(queue, step.next, { id, db });
        alerts = step.alerts;
        return true;
      });
      return alerts;
    },
  };
}
