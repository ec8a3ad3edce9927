/**
 * A promise the test opens itself when what it waits for has happened (a handler started, a request
 * arrived), in place of a sleep that hopes it has. `opened` rejects after `timeoutMs` naming `what`, so
 * a gate that never opens fails the test with a reason instead of hanging it.
 */
export function gate<T = void>(what: string, timeoutMs = 5000) {
  let open!: (value: T) => void;
  let isOpen = false;
  const opened = new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${what}: did not happen within ${timeoutMs} ms`)),
      timeoutMs,
    );
    open = (value: T) => {
      isOpen = true;
      clearTimeout(timer);
      resolve(value);
    };
  });
  // A gate nobody awaits must not reject unhandled when its timer runs out.
  opened.catch(() => undefined);
  return { opened, open, isOpen: () => isOpen };
}
