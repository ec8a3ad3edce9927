import { decodeCursor } from '../inbox/dead-letter-cursor';
import { UsageError } from './cli-errors';

/** The page `--after` or `--before` names, as `deadLetters()` takes it: `{}` for the first page. */
export function cursorFlags(flags: { after?: string; before?: string }): {
  after?: string;
  before?: string;
} {
  const { after, before } = flags;
  if (after !== undefined && before !== undefined)
    throw new UsageError('give --after (the next, older page) or --before (the newer page), not both');
  if (after !== undefined) return { after: checked('--after', after) };
  if (before !== undefined) return { before: checked('--before', before) };
  return {};
}

/** Checked before the queue is reached: a mistyped cursor is a usage error, not a failed read. */
function checked(flag: string, cursor: string): string {
  try {
    decodeCursor(cursor, 'inbox dead-letters', flag);
  } catch {
    const shown = `${JSON.stringify(cursor.slice(0, 40))}${cursor.length > 40 ? '…' : ''}`;
    throw new UsageError(
      `${flag} must be a dead letter's cursor, as inbox dead-letters prints it after a full page (or --json in "cursor") (got ${shown})`,
    );
  }
  return cursor;
}
