import type { DeadLettersQuery } from '../inbox/check-dead-letter-query';
import { encodeCursor, type DeadLetterPosition } from '../inbox/dead-letter-cursor';
import type { DeadLetter } from '../inbox/inbox';
import { OptionsError } from '../options-error';
import { deadLetterFromData } from './dead-letter-data';
import type { PgBoss } from './load-pg-boss';
import { findDeadJobs, type DeadJobPosition } from './pg-boss-reads';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A cursor's position as this engine's rows order: a failure time string and a job's uuid. */
function rowPosition(position: DeadLetterPosition | undefined, name: string): DeadJobPosition | undefined {
  if (position === undefined) return undefined;
  if (typeof position.failedAt !== 'string' || !UUID.test(position.id))
    throw new OptionsError(
      'ERR_SW_OPTION',
      'inbox.deadLetters',
      `${name} is the cursor of another inbox's dead letter (a BullMQ one?); pass the cursor a dead letter of this inbox gave`,
    );
  return { id: position.id, data: { failedAt: position.failedAt } };
}

/** `deadLetters()` on pg-boss: one page in SQL, each letter with its cursor. */
export async function readDeadLetters(
  boss: PgBoss,
  schema: string,
  dead: string,
  query: DeadLettersQuery,
): Promise<DeadLetter[]> {
  const jobs = await findDeadJobs(boss, schema, dead, {
    limit: query.limit,
    type: query.type,
    handler: query.handler,
    after: rowPosition(query.after, 'after'),
    before: rowPosition(query.before, 'before'),
  });
  return jobs.map((j) => ({
    ...deadLetterFromData(j.data),
    cursor: encodeCursor({ failedAt: j.data.failedAt, id: j.id }),
  }));
}
