import { createRequire } from 'node:module';
import type * as PgBossModule from 'pg-boss' with { 'resolution-mode': 'import' };

/** The part of `pg`'s Pool used here. */
interface Pool {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  end(): Promise<void>;
}

/**
 * A connection to `connectionString` on which PostgreSQL itself refuses every write
 * (`default_transaction_read_only`): what reads through it cannot change the database, whatever
 * they run. `pg` is pg-boss's own (loaded from beside it), so nothing more is installed.
 */
export function readOnlyDb(connectionString: string): PgBossModule.Db & { close(): Promise<void> } {
  // pg-boss's own dependency, found from beside it.
  const pg = createRequire(require.resolve('pg-boss'))('pg') as {
    Pool: new (config: object) => Pool;
  };
  const pool = new pg.Pool({
    connectionString,
    max: 1,
    options: '-c default_transaction_read_only=on',
  });
  // A connection lost while idle is reported on the next query; unheard here, it would crash.
  pool.on('error', () => undefined);
  return {
    executeSql: (text, values) => pool.query(text, values) as Promise<{ rows: never[] }>,
    close: () => pool.end(),
  };
}
