import type { ResolvedLogger } from '../../logger';
import type { BoundedStore } from './bounded-store';

/**
 * Renews a running try's claim every third of its lease until `running` settles, as BullMQ renews a
 * job's lock while its processor runs: a try whose handlers outlive its timeout (they ignore
 * `ctx.signal`) keeps the event, so no other try starts them while they run; a try whose worker
 * died stops renewing, and its claim ends with the lease. A failed renewal is tried again at the
 * next tick (two thirds of the lease are left); a lost claim (the lease ran out and was taken) is
 * logged and no longer renewed.
 */
export function keepClaim(
  store: BoundedStore,
  key: string,
  token: string,
  leaseMs: number,
  running: Promise<unknown>,
  log: ResolvedLogger,
  eventId: string,
): void {
  const renew = store.renew;
  if (renew === undefined) return;
  let settled = false;
  let pending = false;
  const timer = setInterval(
    () => {
      if (pending) return;
      pending = true;
      void renew(key, token).then((renewed) => {
        pending = false;
        if (settled || renewed !== false) return;
        clearInterval(timer);
        log.warn(
          { eventId, leaseMs },
          "a running try lost its claim on the event (its lease ran out before a renewal reached the idempotency store): another try may run its handlers meanwhile. Check the store's health",
        );
      });
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  // The handlers keep the process alive while they run; the timer need not.
  timer.unref();
  const stop = () => {
    settled = true;
    clearInterval(timer);
  };
  running.then(stop, stop);
}
