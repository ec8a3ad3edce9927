import type * as PgBossModule from 'pg-boss' with { 'resolution-mode': 'import' };
import { OptionsError } from '../options-error';
import type { PgBoss } from './load-pg-boss';

/** A connection inside one transaction: pass it as the `db` option of pg-boss's calls. */
export type TransactionDb = PgBossModule.Db;

/**
 * Refuses, at start, a boss whose database adapter cannot open a transaction (pg-boss's own pool
 * can): the worker settles a job in several calls that must take effect together or not at all.
 */
export function checkTransactions(boss: PgBoss, where: string): void {
  if (typeof boss.getDb().beginTransaction !== 'function')
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      "the boss's database adapter has no beginTransaction(), and the worker settles a job in one transaction; give a PgBoss on pg-boss's own pool (a connectionString), or an adapter that implements it",
    );
}

/**
 * Runs `steps` in one pg-boss transaction, committed only when they return true: otherwise, or if
 * a step throws or the process dies first, none of them took effect.
 */
export async function inTransaction(
  boss: PgBoss,
  steps: (db: TransactionDb) => Promise<boolean>,
): Promise<void> {
  const db = boss.getDb();
  // checkTransactions refused an adapter without it at start.
  const tx = await (db.beginTransaction as NonNullable<TransactionDb['beginTransaction']>).call(db);
  let keep: boolean;
  try {
    keep = await steps(tx.db);
  } catch (error) {
    await tx.rollback();
    throw error;
  }
  await (keep ? tx.commit() : tx.rollback());
}
