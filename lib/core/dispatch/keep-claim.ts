import type { ResolvedLogger } from '../../logger';

/** What {@link keepClaim} renews, and for how long at most. */
export interface KeptClaim {
  /** Extends the lease by `leaseMs`: `false` when it was lost, `'unavailable'` or `undefined` to try again. */
  renew: () => Promise<boolean | 'unavailable' | undefined>;
  leaseMs: number;
  /**
   * The epoch ms after which no renewal is made although `running` is still pending: the handlers
   * ignored `ctx.signal` that long, so the lease is left to lapse (`leaseMs` later) and the tries of
   * the event go on. Every wait is bounded, a hung handler's too.
   */
  untilMs: number;
  /** What is held, for the log lines ("the event", "the entity"). */
  what: string;
}

/**
 * Renews a running try's lease every third of its term until `running` settles, as BullMQ renews a
 * job's lock while its processor runs: a try whose handlers outlive its timeout (they ignore
 * `ctx.signal`) keeps the event (and its entity), so no other try starts them while they run; a try
 * whose worker died stops renewing, and its lease ends with the term. A failed renewal is tried again
 * at the next tick (two thirds of the term are left); a lost lease (it ran out and was taken) is
 * logged and no longer renewed; past `untilMs` the renewals stop, said once.
 */
export function keepClaim(
  claim: KeptClaim,
  running: Promise<unknown>,
  log: ResolvedLogger,
  eventId: string,
): void {
  const { renew, leaseMs, untilMs, what } = claim;
  let settled = false;
  let pending = false;
  const stop = () => {
    settled = true;
    clearInterval(timer);
  };
  const timer = setInterval(
    () => {
      if (pending) return;
      if (Date.now() >= untilMs) {
        stop();
        log.warn(
          { eventId, leaseMs },
          `a try's handlers ignored ctx.signal past its timeout plus one lease: ${what} is no longer held for them and is free in ${leaseMs} ms, when another try may start them again while they still run. Make the handlers honour ctx.signal`,
        );
        return;
      }
      pending = true;
      void renew().then((renewed) => {
        pending = false;
        if (settled || renewed !== false) return;
        stop();
        log.warn(
          { eventId, leaseMs },
          `a running try lost its hold on ${what} (its lease ran out before a renewal reached the idempotency store): another try may run its handlers meanwhile. Check the store's health`,
        );
      });
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  // The handlers keep the process alive while they run; the timer need not.
  timer.unref();
  running.then(stop, stop);
}
