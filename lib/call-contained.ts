/**
 * Calls an application hook (`onDelivery`, `onRequestStart`): what it throws or rejects goes to
 * `failed`, never into the request path or an unhandled rejection.
 */
export function callContained(call: () => unknown, failed: (error: unknown) => void): void {
  try {
    const result: unknown = call();
    if (typeof (result as Promise<unknown> | undefined)?.then === 'function') {
      (result as Promise<unknown>).then(undefined, failed);
    }
  } catch (error) {
    failed(error);
  }
}
