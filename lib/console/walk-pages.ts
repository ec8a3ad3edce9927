import type { WebhookPage } from './console-wire';

/**
 * A list longer than this is taken for a server that ignores `page`: 1000 pages of 100 is 100 000
 * webhooks, far past any account.
 */
const MAX_PAGES = 1000;

/**
 * Walks the list page after page. Stops on a page that is empty, says it is the last, or holds
 * exactly the webhooks of a page seen before (a server that ignores `page`); throws past
 * {@link MAX_PAGES} instead of looping for ever.
 */
export async function* walkPages(
  fetchPage: (page: number) => Promise<WebhookPage>,
): AsyncGenerator<WebhookPage> {
  const seen = new Set<string>();
  for (let page = 1; page <= MAX_PAGES; page++) {
    const result = await fetchPage(page);
    const fingerprint = result.webhooks.map((w) => w.id).join('\n');
    if (seen.has(fingerprint)) return;
    seen.add(fingerprint);
    yield result;
    if (!result.hasMore || result.webhooks.length === 0) return;
  }
  throw new Error(
    `[service-webhooks] ConsoleClient: the webhook list went on past ${MAX_PAGES} pages; stopped reading it. Check that baseUrl points at the console API and that it honours the page parameter.`,
  );
}
