import type { DeadLetter } from '../inbox/inbox';
import { text, when } from './console-text';
import { reasonOf } from './newer-fields';

/** The longest last error a list row shows; the dead letter's page shows all of it. */
const ERROR_CHARS = 160;

function shortError(error: string | null): string {
  if (error === null) return '—';
  return error.length > ERROR_CHARS ? `${error.slice(0, ERROR_CHARS)}…` : error;
}

/**
 * The link to one dead letter's page. Its type rides along so the lookup can filter by it, and the
 * cursor of the letter listed before it (`after`), so its page reads it at once however deep it is.
 */
export function letterHref(base: string, letter: DeadLetter, after?: string): string {
  return `${base}/dead-letters/${encodeURIComponent(letter.delivery.id)}?type=${encodeURIComponent(letter.delivery.type)}${after === undefined ? '' : `&after=${encodeURIComponent(after)}`}`;
}

/**
 * A table of dead letters, newest first, each linking to its page; `from` is the cursor of the letter
 * before the first (none: the first is the newest).
 */
export function deadLetterTable(
  base: string,
  letters: readonly DeadLetter[],
  testId: string,
  from?: string,
): string {
  if (letters.length === 0)
    return `<p class="empty" data-testid="${testId}-empty">No dead letters: every event's handlers succeeded or are still being tried.</p>`;
  const rows = letters
    .map((letter, i) => {
      const reason = reasonOf(letter);
      const after = i === 0 ? from : letters[i - 1]?.cursor;
      return `<tr data-testid="dead-letter" data-event-id="${text(letter.delivery.id)}">
<td><a href="${text(letterHref(base, letter, after))}"><code>${text(letter.delivery.id)}</code></a>${reason === 'invalid' ? ' <span class="badge quarantined">quarantined</span>' : ''}</td>
<td><code>${text(letter.delivery.type)}</code></td><td class="num">${letter.attempts}</td>
<td>${when(letter.failedAt)}</td><td class="error">${text(shortError(letter.lastError))}</td></tr>`;
    })
    .join('\n');
  return `<table data-testid="${testId}"><thead><tr><th scope="col">Event</th><th scope="col">Type</th><th scope="col">Tries</th><th scope="col">Failed at</th><th scope="col">Last error</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}
