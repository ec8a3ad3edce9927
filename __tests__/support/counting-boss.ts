import type { PgBoss } from '../../lib/pg-boss/load-pg-boss';

/**
 * A boss whose reads of queue `queue` (its SQL and `findJobs`) are counted, row by row: `before` runs
 * before each such read, `read` after it with the rows it brought back.
 */
export function countingBoss(
  boss: PgBoss,
  queue: string,
  read: (rows: number) => void,
  before: () => Promise<void> = async () => undefined,
): PgBoss {
  return new Proxy(boss, {
    get(target, property) {
      if (property === 'getDb')
        return () => {
          const db = target.getDb();
          return {
            async executeSql(text: string, values?: unknown[]) {
              if (values?.[0] === queue) await before();
              const result = await db.executeSql(text, values);
              if (values?.[0] === queue) read(result.rows.length);
              return result;
            },
          };
        };
      if (property === 'findJobs')
        return async (...args: Parameters<PgBoss['findJobs']>) => {
          if (args[0] === queue) await before();
          const jobs = await target.findJobs(...args);
          if (args[0] === queue) read(jobs.length);
          return jobs;
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
