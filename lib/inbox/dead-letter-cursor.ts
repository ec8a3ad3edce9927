import { OptionsError } from '../options-error';

/**
 * Where a dead letter stands in the newest-first order of `deadLetters()`: when it failed (`failedAt`,
 * as the engine orders by it) and the engine's id of it, which breaks ties.
 */
export interface DeadLetterPosition {
  /** pg-boss: the ISO 8601 failure time its rows are ordered by; BullMQ: the failed set's score (ms). */
  failedAt: string | number;
  /** The engine's id of the dead letter (pg-boss's job id, BullMQ's job id). */
  id: string;
}

/** The longest cursor read: a time and an id, base64url. */
const MAX_CURSOR = 1024;

/** A dead letter's `cursor`: its position, opaque to the caller (base64url of JSON). */
export function encodeCursor(position: DeadLetterPosition): string {
  return Buffer.from(JSON.stringify([position.failedAt, position.id])).toString('base64url');
}

/** The position a cursor names; rejects, saying what to pass, anything `encodeCursor` did not make. */
export function decodeCursor(cursor: unknown, where: string, name: string): DeadLetterPosition {
  const refuse = () =>
    new OptionsError(
      'ERR_SW_OPTION',
      where,
      `${name} must be the cursor of a dead letter, as deadLetters() gives it in letter.cursor (got ${typeof cursor === 'string' ? `${JSON.stringify(cursor.slice(0, 40))}${cursor.length > 40 ? '…' : ''}` : typeof cursor})`,
    );
  if (typeof cursor !== 'string' || cursor === '' || cursor.length > MAX_CURSOR || !/^[\w-]+$/.test(cursor))
    throw refuse();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !(typeof parsed[0] === 'string' || (typeof parsed[0] === 'number' && Number.isFinite(parsed[0]))) ||
    typeof parsed[1] !== 'string' ||
    parsed[1] === ''
  )
    throw refuse();
  return { failedAt: parsed[0] as string | number, id: parsed[1] };
}
