import { checkTransactions, inTransaction, type TransactionDb } from '../lib/pg-boss/in-transaction';
import type { PgBoss } from '../lib/pg-boss/load-pg-boss';

const executeSql = () => Promise.resolve({ rows: [] });

/** A boss whose adapter records how each transaction ended. */
function bossWith(ended: string[]): PgBoss {
  const db: TransactionDb = {
    executeSql,
    beginTransaction: () =>
      Promise.resolve({
        db: { executeSql },
        commit: () => Promise.resolve(void ended.push('commit')),
        rollback: () => Promise.resolve(void ended.push('rollback')),
      }),
  };
  return { getDb: () => db } as unknown as PgBoss;
}

describe('checkTransactions', () => {
  it('refuses an adapter that cannot open a transaction, saying what to give instead', () => {
    const boss = { getDb: () => ({ executeSql }) } as unknown as PgBoss;
    expect(() => checkTransactions(boss, 'inbox.startWorker')).toThrow(
      expect.objectContaining({
        code: 'ERR_SW_OPTION',
        message: expect.stringMatching(/^\[service-webhooks\] inbox\.startWorker: .*beginTransaction\(\)/),
      }),
    );
  });

  it("accepts pg-boss's own kind of adapter", () => {
    expect(() => checkTransactions(bossWith([]), 'inbox.startWorker')).not.toThrow();
  });
});

describe('inTransaction', () => {
  it.each([
    ['commit', 'the steps keep their work', async () => true],
    ['rollback', 'the steps took no effect', async () => false],
  ])('%s when %s', async (end, _what, steps) => {
    const ended: string[] = [];
    await inTransaction(bossWith(ended), steps);
    expect(ended).toEqual([end]);
  });

  it('a step that throws rolls back and the error reaches the caller', async () => {
    const ended: string[] = [];
    await expect(
      inTransaction(bossWith(ended), () => Promise.reject(new Error('the database went away'))),
    ).rejects.toThrow('the database went away');
    expect(ended).toEqual(['rollback']);
  });
});
