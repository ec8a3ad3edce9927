import type { PgBoss } from './load-pg-boss';

/** The marker queue's name is the queue's and this: it exists exactly while the queue is paused. */
export const PAUSED_SUFFIX = '.paused';
/** How often a worker reads the flag: a pause reaches every worker within about this long. */
export const PAUSE_READ_MS = 1_000;

// pg-boss has no pause of its own. The flag is a queue of pg-boss's that holds no job, made to pause
// and deleted to resume: shared by every process, durable in PostgreSQL, and kept only through
// pg-boss's public API (no table of ours, no write to its tables).

/** Whether queue `name` is paused now. */
export async function isPaused(boss: PgBoss, name: string): Promise<boolean> {
  return (await boss.getQueue(`${name}${PAUSED_SUFFIX}`)) !== null;
}

/** Pauses queue `name`; idempotent, and another process pausing it meanwhile is no failure. */
export async function setPaused(boss: PgBoss, name: string, paused: boolean): Promise<void> {
  const marker = `${name}${PAUSED_SUFFIX}`;
  if (!paused) return boss.deleteQueue(marker);
  if (await isPaused(boss, name)) return;
  await boss.createQueue(marker).catch(async (error: unknown) => {
    if (!(await isPaused(boss, name))) throw error;
  });
}
