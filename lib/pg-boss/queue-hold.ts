/**
 * Until when each queue's workers in this process start no try, by queue name: a handler's
 * RateLimited holds them all. pg-boss has no rate limit to set, so the hold is this process's; a
 * worker of the queue in another process holds off only when a handler of its own throws one.
 */
const heldUntil = new Map<string, number>();

/** Holds queue `name`'s workers in this process for `ms` from now (a longer hold already set stays). */
export function holdQueue(name: string, ms: number): void {
  const until = Date.now() + ms;
  if ((heldUntil.get(name) ?? 0) < until) heldUntil.set(name, until);
}

/** How many ms queue `name`'s workers in this process still hold off; 0 when they may start tries. */
export function queueHeldFor(name: string): number {
  const until = heldUntil.get(name);
  if (until === undefined) return 0;
  const left = until - Date.now();
  if (left > 0) return left;
  heldUntil.delete(name);
  return 0;
}
