import type { JobRecord } from '../inbox/inbox';

/** The minutes the chart covers: the last hour. */
export const MINUTES = 60;
const MINUTE_MS = 60_000;

/** The tries of one minute, by what became of them. */
export interface MinuteTries {
  /** The minute's start, in ms since the epoch. */
  at: number;
  /** Tries that ended the event: its handlers ran (or had nothing to run, or ran before, or it was stale). */
  processed: number;
  /** Tries that failed and will run again. */
  retried: number;
  /** Tries that failed for good: the event went to the dead letters. */
  dead: number;
}

/**
 * Counts the tries the workers of this process report through `onJob`, per minute, for the last hour:
 * 60 slots reused in a ring, so memory is the same however busy the queue is. The inbox keeps no
 * history of tries, so this is the only count there is; a worker in another process reports to its
 * own console (or to Prometheus, through `inboxMetrics().onJob`).
 */
export class TriesPerMinute {
  readonly #slots: MinuteTries[] = [];
  /** Whether any worker has reported: the page says how to wire `onJob` until one has. */
  wired = false;

  record(outcome: JobRecord['outcome'], now = Date.now()): void {
    this.wired = true;
    const at = Math.floor(now / MINUTE_MS) * MINUTE_MS;
    const index = (at / MINUTE_MS) % MINUTES;
    let slot = this.#slots[index];
    if (slot === undefined || slot.at !== at) {
      slot = { at, processed: 0, retried: 0, dead: 0 };
      this.#slots[index] = slot;
    }
    if (outcome === 'retry') slot.retried++;
    else if (outcome === 'dead') slot.dead++;
    else slot.processed++;
  }

  /** The last hour, oldest minute first, the current minute last; minutes with no try count 0. */
  lastHour(now = Date.now()): MinuteTries[] {
    const current = Math.floor(now / MINUTE_MS) * MINUTE_MS;
    const hour: MinuteTries[] = [];
    for (let i = MINUTES - 1; i >= 0; i--) {
      const at = current - i * MINUTE_MS;
      const slot = this.#slots[(at / MINUTE_MS) % MINUTES];
      hour.push(slot?.at === at ? { ...slot } : { at, processed: 0, retried: 0, dead: 0 });
    }
    return hour;
  }
}
