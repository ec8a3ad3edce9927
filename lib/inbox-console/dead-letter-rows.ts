import type { DeadLetter } from '../inbox/inbox';
import { text, when } from './console-text';
import { reasonOf } from './newer-fields';

/** The longest last error a list row shows; the dead letter's page shows all of it. */
const ERROR_CHARS = 160;

function shortError(error: string | null): string {
  if (error === null) return '—';
  return error.length > ERROR_CHARS ? `${error.slice(0, ERROR_CHARS)}…` : error;
}

/** The link to one dead letter's page; its type rides along so the lookup can filter by it. */
export function letterHref(base: string, letter: DeadLetter): string {
  return `${base}/dead-letters/${encodeURIComponent(letter.delivery.id)}?type=${encodeURIComponent(letter.delivery.type)}`;
}

/** A table of dead letters, newest first, each linking to its page. */
export function deadLetterTable(base: string, letters: readonly DeadLetter[], testId: string): string {
  if (letters.length === 0)
    return `<p class="empty" data-testid="${testId}-empty">No dead letters: every event's handlers succeeded or are still being tried.</p>`;
  const rows = letters
    .map((letter) => {
      const reason = reasonOf(letter);
      return `<tr data-testid="dead-letter" data-event-id="${text(letter.delivery.id)}">
<td><a href="${text(letterHref(base, letter))}"><code>${text(letter.delivery.id)}</code></a>${reason === 'invalid' ? ' <span class="badge quarantined">quarantined</span>' : ''}</td>
<td><code>${text(letter.delivery.type)}</code></td><td class="num">${letter.attempts}</td>
<td>${when(letter.failedAt)}</td><td class="error">${text(shortError(letter.lastError))}</td></tr>`;
    })
    .join('\n');
  return `<table data-testid="${testId}"><thead><tr><th scope="col">Event</th><th scope="col">Type</th><th scope="col">Tries</th><th scope="col">Failed at</th><th scope="col">Last error</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}
