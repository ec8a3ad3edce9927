import type * as PgBossModule from 'pg-boss' with { 'resolution-mode': 'import' };

export type PgBoss = PgBossModule.PgBoss;
export type PgBossJob = PgBossModule.JobWithMetadata<unknown>;

let loaded: typeof PgBossModule | undefined;

/** `pg-boss` (an ES module: `require` loads it on Node ≥ 22.12), on first use, with what to do when absent. */
export function loadPgBoss(): typeof PgBossModule {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, loaded when used
    loaded ??= require('pg-boss') as typeof PgBossModule;
  } catch (error) {
    throw new Error(
      "[service-webhooks] pgBossInbox: could not load 'pg-boss'; install it (npm install pg-boss@12) beside service-webhooks",
      { cause: error },
    );
  }
  return loaded;
}
