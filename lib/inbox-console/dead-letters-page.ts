import type { DeadLetter } from '../inbox/inbox';
import { text } from './console-text';
import { deadLetterTable } from './dead-letter-rows';
import { page, type PageFrame } from './page-layout';

/** Dead letters a list page shows. */
export const PAGE_SIZE = 50;
/**
 * How deep the pages go: the inbox reads dead letters newest first with a limit and no cursor, so
 * page n holds n × 50 in memory while it renders. Past the newest 1 000, a type narrows the list
 * (or the CLI reads up to 100 000); the number of dead letters is always the status's, whatever
 * the depth.
 */
export const MAX_PAGES = 20;

/** One page of the dead letters, newest first, with links to the pages beside it. */
export function deadLettersPage(
  frame: PageFrame,
  letters: readonly DeadLetter[],
  at: { page: number; type: string | undefined; more: boolean },
): string {
  const base = text(frame.base);
  const typeQuery = at.type === undefined ? '' : `&amp;type=${text(encodeURIComponent(at.type))}`;
  const first = (at.page - 1) * PAGE_SIZE;
  const links = [
    at.page > 1
      ? `<a rel="prev" href="${base}/dead-letters?page=${at.page - 1}${typeQuery}" data-testid="prev-page">Newer</a>`
      : '',
    at.more && at.page < MAX_PAGES
      ? `<a rel="next" href="${base}/dead-letters?page=${at.page + 1}${typeQuery}" data-testid="next-page">Older</a>`
      : '',
  ].filter((link) => link !== '');
  const deep =
    at.more && at.page >= MAX_PAGES
      ? `<p class="empty" data-testid="depth-note">The console pages through the newest ${MAX_PAGES * PAGE_SIZE} dead letters${at.type === undefined ? '' : ' of this type'}; filter by type to reach older ones, or read them with <code>service-webhooks inbox dead-letters</code>.</p>`
      : '';
  const main = `<form method="get" action="${base}/dead-letters" class="inline" role="search">
<label>Event type <input name="type" value="${text(at.type ?? '')}" data-testid="list-type" autocomplete="off"></label>
<button type="submit">Filter</button></form>
<p data-testid="range">${letters.length === 0 ? 'None here.' : `${first + 1}–${first + letters.length} of the ${frame.status.dead} dead letters, newest first${at.type === undefined ? '' : `, of type <code>${text(at.type)}</code>`}.`}</p>
${deadLetterTable(frame.base, letters, 'dead-letters')}
<nav aria-label="pages" class="pages">${links.join(' ')} <span>page ${at.page}</span></nav>
${deep}`;
  return page(frame, main);
}
