export interface WaitOptions {
  /** Defaults to `10_000` ms; past it the wait rejects, saying what was still pending. */
  timeoutMs?: number;
}

/** Polls `done` until it holds; past `timeoutMs` rejects, saying what is still pending. */
export function waitUntil(done: () => boolean, options: WaitOptions, pending: () => string): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!done()) return false;
      cleanup();
      resolve();
      return true;
    };
    const interval = setInterval(check, 10);
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`[service-webhooks] emulator: still waiting after ${timeoutMs} ms: ${pending()}`));
    }, timeoutMs);
    const cleanup = () => {
      clearInterval(interval);
      clearTimeout(timer);
    };
    check();
  });
}
