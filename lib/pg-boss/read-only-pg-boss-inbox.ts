import { createRequire } from 'node:module';
import type * as PgBossModule from 'pg-boss' with { 'resolution-mode': 'import' };
import { didYouMean } from '../did-you-mean';
import { checkDeadLettersQuery, checkIssuesQuery } from '../inbox/check-dead-letter-query';
import { findIssues } from './pg-boss-issue-reads';
import type { Inbox } from '../inbox/inbox';
import { checkSchemaName } from './check-schema-name';
import { readDeadLetters } from './read-dead-letters';
import { loadPgBoss, type PgBoss } from './load-pg-boss';
import { checkReadSchema, readStatus } from './pg-boss-reads';
import { isPaused, PAUSED_SUFFIX } from './pause-flag';
import { readOnlyRefusals } from '../inbox/read-only-refusals';
import { ISSUES_SUFFIX } from './pg-issue-ledger';

const WHERE = 'inbox';

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
function readOnlyDb(connectionString: string): PgBossModule.Db & { close(): Promise<void> } {
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

/**
 * The pg-boss queue `name` opened only to be read (`inbox status`, `inbox dead-letters`): pg-boss is
 * not started (its start creates or migrates its schema, makes queues, records an instance), and the
 * connection is read-only, so nothing in the database changes. A queue that is not there (a misspelt
 * name, a database without pg-boss) is an error saying so, with the closest name there is.
 */
export function readOnlyPgBossInbox(options: {
  connectionString: string;
  name?: string;
  schema?: string;
}): Inbox {
  const name = options.name ?? 'service-webhooks';
  const schema = checkSchemaName(options.schema ?? 'pgboss', WHERE);
  const dead = `${name}.dead`;
  const db = readOnlyDb(options.connectionString);
  let ready: Promise<PgBoss> | undefined;

  function boss(): Promise<PgBoss> {
    ready ??= (async () => {
      const b = new (loadPgBoss().PgBoss)({ db, schema });
      if (!(await b.isInstalled()))
        throw new Error(
          `[service-webhooks] no queue named "${name}": this database has no pg-boss schema "${schema}" (a worker or receiver makes it; check --url)`,
        );
      await checkReadSchema(b, schema, WHERE);
      if ((await b.getQueue(name)) === null) {
        const names = (await b.getQueues())
          .map((q) => q.name)
          .filter((n) => !n.endsWith('.dead') && !n.endsWith(PAUSED_SUFFIX) && !n.endsWith(ISSUES_SUFFIX));
        const hint = didYouMean(name, names);
        throw new Error(
          `[service-webhooks] no queue named "${name}"${hint === undefined ? `; check --name` : ` (did you mean ${hint}?)`}`,
        );
      }
      return b;
    })();
    return ready;
  }

  return {
    engine: 'pg-boss',
    name,
    ...readOnlyRefusals('pgBossInbox'),
    async deadLetters(query) {
      return readDeadLetters(await boss(), schema, dead, checkDeadLettersQuery(query));
    },
    issues: async (query) => findIssues(await boss(), schema, dead, checkIssuesQuery(query)),
    status: async () => {
      const b = await boss();
      return { paused: await isPaused(b, name), ...(await readStatus(b, schema, name, dead)) };
    },
    close: () => db.close(),
  };
}
