import type { InboxIssue } from '../inbox/inbox-issue';
import { escapeControl } from '../logger';

/** The widest an error column gets: a line stays readable in a terminal. */
const ERROR_WIDTH = 80;

/**
 * Issues as a table, one line each under a header, the columns padded to their widest cell. The
 * type, handler and error are the sender's and a handler's bytes: escaped, they cannot forge a line.
 */
export function issueLines(issues: readonly InboxIssue[]): string[] {
  const rows = issues.map((i) =>
    [
      i.key,
      String(i.count),
      i.type,
      i.handler ?? '(event)',
      i.lastSeen.toISOString(),
      `${i.error.name}: ${i.error.message}`.slice(0, ERROR_WIDTH),
    ].map((cell) => escapeControl(cell)),
  );
  const table = [['ISSUE', 'COUNT', 'TYPE', 'HANDLER', 'LAST SEEN', 'ERROR'], ...rows];
  const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
  return table.map((row) =>
    row
      .map((cell, c) => (c === row.length - 1 ? cell : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd(),
  );
}
