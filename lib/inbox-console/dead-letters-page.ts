import type { DeadLetter } from '../inbox/inbox';
import { text } from './console-text';
import { deadLetterTable } from './dead-letter-rows';
import { page, type PageFrame } from './page-layout';

/** Dead letters a list page shows. */
export const PAGE_SIZE = 50;

/** Where a list page stands: the cursors its links read the pages beside it with. */
export interface ListPlace {
  type: string | undefined;
  /** The cursor before the first row (none: it is the newest). */
  from: string | undefined;
  /** The page before: `'newest'` for the first page, a cursor to read before, or none (this is it). */
  newer: 'newest' | string | undefined;
  /** The cursor to read the older page after, or none (this is the oldest). */
  older: string | undefined;
}

/**
 * One page of the dead letters, newest first, with links to the pages beside it. The inbox reads
 * each page after (or before) a dead letter's cursor, so every page is one read of 51 however deep
 * it is, and paging reaches each dead letter once.
 */
export function deadLettersPage(frame: PageFrame, letters: readonly DeadLetter[], at: ListPlace): string {
  const base = text(frame.base);
  const typeQuery = at.type === undefined ? '' : `type=${text(encodeURIComponent(at.type))}`;
  const href = (cursor: string | undefined, name: 'after' | 'before') =>
    `${base}/dead-letters?${[typeQuery, cursor === undefined ? '' : `${name}=${text(encodeURIComponent(cursor))}`].filter((q) => q !== '').join('&amp;')}`;
  const links = [
    at.newer === undefined
      ? ''
      : `<a rel="prev" href="${at.newer === 'newest' ? href(undefined, 'before') : href(at.newer, 'before')}" data-testid="prev-page">Newer</a>`,
    at.older === undefined
      ? ''
      : `<a rel="next" href="${href(at.older, 'after')}" data-testid="next-page">Older</a>`,
  ].filter((link) => link !== '');
  const main = `<form method="get" action="${base}/dead-letters" class="inline" role="search">
<label>Event type <input name="type" value="${text(at.type ?? '')}" data-testid="list-type" autocomplete="off"></label>
<button type="submit">Filter</button></form>
<p data-testid="range">${letters.length === 0 ? 'None here.' : `${letters.length} of the ${frame.status.dead} dead letters, newest first${at.type === undefined ? '' : `, of type <code>${text(at.type)}</code>`}${at.newer === undefined ? ', from the newest' : ''}.`}</p>
${deadLetterTable(frame.base, letters, 'dead-letters', at.from)}
<nav aria-label="pages" class="pages">${links.join(' ')}</nav>`;
  return page(frame, main);
}
