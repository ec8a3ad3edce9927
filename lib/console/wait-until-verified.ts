import type { ConsoleWebhook, WebhookPage } from './console-wire';
import { walkPages } from './walk-pages';

/** How long `waitUntilVerified` polls, and how often. */
export interface WaitUntilVerifiedOptions {
  /** The whole wait, list requests included. Defaults to `30_000` ms. */
  timeoutMs?: number;
  /** Time between polls of the list. Defaults to `1_000` ms. */
  intervalMs?: number;
}

type FetchPage = (page: number, signal: AbortSignal) => Promise<WebhookPage>;

/** Sleeps `ms`, or less when `signal` aborts first. */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });

/**
 * Polls the list (spec 4.4) until webhook `id` is verified. The deadline holds inside pagination: it
 * aborts the request in flight and no page is asked for after it.
 */
export async function waitUntilVerified(
  fetchPage: FetchPage,
  id: string,
  options: WaitUntilVerifiedOptions,
): Promise<ConsoleWebhook> {
  const { timeoutMs = 30_000, intervalMs = 1_000 } = options;
  const deadline = AbortSignal.timeout(timeoutMs);
  const late = () =>
    new Error(
      `[service-webhooks] waitUntilVerified: webhook ${id} not verified after ${timeoutMs} ms; check that its URL answers the handshake`,
    );
  for (;;) {
    let found: ConsoleWebhook | undefined;
    try {
      for await (const page of walkPages((n) => fetchPage(n, deadline))) {
        if (deadline.aborted) throw late();
        found = page.webhooks.find((webhook) => webhook.id === id);
        if (found !== undefined) break;
      }
    } catch (error) {
      throw deadline.aborted ? late() : error;
    }
    if (found === undefined)
      throw new Error(`[service-webhooks] waitUntilVerified: webhook ${id} is not on this account`);
    if (found.verified) return found;
    if (deadline.aborted) throw late();
    await sleep(intervalMs, deadline);
    if (deadline.aborted) throw late();
  }
}
