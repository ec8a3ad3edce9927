import type { Dispatcher } from './dispatcher';
import type { RequestsInFlight } from './requests-in-flight';

/** What `drain()` found: whether everything settled within its bound, and what was still running. */
export interface DrainResult {
  /** True when everything settled within the bound; false when the timeout came first. */
  drained: boolean;
  /** Requests still being read, checked or answered. */
  requests: number;
  /** Ids of events whose handlers were still running. */
  running: string[];
}

/**
 * Waits until no request is in the receiver and no handler runs, or until `timeoutMs`. A request
 * counts from the moment it entered (mid-body, waiting on the store), not from dispatch.
 */
export async function drain(
  requests: Pick<RequestsInFlight, 'size' | 'settled'>,
  dispatcher: Dispatcher,
  options: { timeoutMs?: number } = {},
): Promise<DrainResult> {
  const timeoutMs = options.timeoutMs ?? Number.POSITIVE_INFINITY;
  const settled = (async () => {
    while (requests.size > 0 || dispatcher.running().length > 0) {
      await requests.settled();
      await dispatcher.idle();
    }
    return true;
  })();
  let timer: NodeJS.Timeout | undefined;
  const drained = await Promise.race([
    settled,
    new Promise<boolean>((resolve) => {
      if (Number.isFinite(timeoutMs)) timer = setTimeout(resolve, Math.max(0, timeoutMs), false);
    }),
  ]);
  clearTimeout(timer);
  return { drained, requests: requests.size, running: dispatcher.running() };
}
