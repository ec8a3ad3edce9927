import type { Inbox } from '../inbox/inbox';
import { CliFailure } from './cli-errors';
import { openInbox } from './open-inbox';

/** Errors of a socket that never reached its server (or lost it): the URL or the server is wrong. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
]);

/** The URL to show: its password, if any, replaced, so no secret reaches a terminal or a log. */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the queue';
  }
}

/**
 * Opens the inbox `url` names, runs `work`, and always closes it, all within `timeoutMs`: BullMQ's
 * connection queues commands until Redis answers, so without this bound a wrong URL waits forever.
 * Past the bound, or when the server cannot be reached, it fails with what to check. A long `work`
 * (a replay of many pages) calls `heard()` each time the server answered: the bound starts again,
 * so it bounds a silence, not the whole work.
 */
export async function boundedInboxWork<T>(
  url: string | undefined,
  name: string | undefined,
  timeoutMs: number,
  work: (inbox: Inbox, heard: () => void) => Promise<T>,
  access: 'read' | 'write' = 'write',
): Promise<T> {
  const inbox = openInbox(url, name, access);
  const where = shownUrl(url ?? '');
  const check = `check --url and that the server runs`;
  let timer: NodeJS.Timeout | undefined;
  let heard = () => {};
  const timedOut = new Promise<never>((_, reject) => {
    const fail = () =>
      reject(
        new CliFailure(
          `no answer from the ${inbox.engine} queue at ${where} within ${timeoutMs % 1000 === 0 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`}; ${check} (or give a longer --timeout)`,
        ),
      );
    timer = setTimeout(fail, timeoutMs);
    heard = () => timer?.refresh();
  });
  try {
    return await Promise.race([work(inbox, () => heard()), timedOut]);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE.has(code))
      throw new CliFailure(`could not reach the ${inbox.engine} queue at ${where} (${code}); ${check}`);
    throw error;
  } finally {
    clearTimeout(timer);
    // Closing can wait on a silent server too: given 1 s, then the command ends regardless.
    await Promise.race([
      inbox.close().catch(() => undefined),
      new Promise((r) => setTimeout(r, 1000).unref()),
    ]);
  }
}
