import { didYouMean } from '../did-you-mean';
import { checkDeadLettersQuery, checkIssuesQuery } from '../inbox/check-dead-letter-query';
import { findIssues } from './pg-boss-issue-reads';
import type { Inbox } from '../inbox/inbox';
import { checkSchemaName } from './check-schema-name';
import { readDeadLetters } from './read-dead-letters';
import { loadPgBoss, type PgBoss } from './load-pg-boss';
import { checkReadSchema, readStatus } from './pg-boss-reads';
import { readOnlyDb } from './read-only-db';
import { isPaused, PAUSED_SUFFIX } from './pause-flag';
import { readOnlyRefusals } from '../inbox/read-only-refusals';
import { ISSUES_SUFFIX } from './pg-issue-ledger';

const WHERE = 'inbox';

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
