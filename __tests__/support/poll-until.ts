/**
 * Checks `condition` every `everyMs` until it holds, then gives the event loop one more turn (so a
 * rejection left unhandled meanwhile has been reported before a test asserts none was). Past
 * `timeoutMs` it fails naming `what` and, when given, what `describe()` says the state was.
 */
export async function pollUntil(
  what: string,
  condition: () => boolean,
  {
    timeoutMs = 5000,
    everyMs = 5,
    describe,
  }: { timeoutMs?: number; everyMs?: number; describe?: () => string } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error(`${what}: not so within ${timeoutMs} ms${describe ? ` (${describe()})` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  await new Promise((resolve) => setImmediate(resolve));
}
