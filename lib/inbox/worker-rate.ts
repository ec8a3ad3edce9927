import { checkOptionKeys } from '../check-option-keys';
import { OptionsError } from '../options-error';

/** At most `max` tries start per `perMs` ms: {@link InboxWorkerOptions.rate}. */
export interface WorkerRate {
  /** How many tries may start in each `perMs`: a whole number ≥ 1. */
  max: number;
  /** The window, in ms: a whole number ≥ 1. */
  perMs: number;
}

/** A `rate` option checked: undefined when not given. */
export function checkWorkerRate(value: unknown, where: string): WorkerRate | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null)
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      'rate must be { max, perMs }, such as { max: 50, perMs: 1000 }',
    );
  checkOptionKeys(value, ['max', 'perMs'], `${where} rate`);
  const { max, perMs } = value as Partial<WorkerRate>;
  for (const [key, n] of [
    ['max', max],
    ['perMs', perMs],
  ] as const)
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1)
      throw new OptionsError(
        'ERR_SW_OPTION',
        where,
        `rate.${key} must be a whole number ≥ 1 (got ${String(n)}); rate is { max, perMs }, such as { max: 50, perMs: 1000 }`,
      );
  return { max: max as number, perMs: perMs as number };
}

/** The starts of one worker's tries in the last `perMs`: at most `max` of them. */
export interface StartWindow {
  /**
   * Waits (with `wait`, which may end early when the worker stops) until a start fits, and holds it.
   * Resolves the hold: `started()` once a job was taken, `unused()` when none was; or undefined
   * once `stopping()`.
   */
  take(
    wait: (ms: number) => Promise<void>,
    stopping: () => boolean,
  ): Promise<{ started(): void; unused(): void } | undefined>;
}

/**
 * A sliding window of start times, for an engine that cannot limit its workers' rate itself: the
 * bound holds per worker. A hold is taken before the job is asked for, so loops running at once
 * cannot pass it together, and given back when no job came, so idle polls spend nothing.
 */
export function startWindow({ max, perMs }: WorkerRate): StartWindow {
  const starts: number[] = [];
  const drop = (at: number) => {
    const i = starts.indexOf(at);
    if (i >= 0) starts.splice(i, 1);
  };
  return {
    async take(wait, stopping) {
      for (;;) {
        if (stopping()) return undefined;
        const now = Date.now();
        while (starts.length > 0 && now - (starts[0] as number) >= perMs) starts.shift();
        if (starts.length < max) break;
        await wait((starts[0] as number) + perMs - now);
      }
      const held = Date.now();
      starts.push(held);
      return {
        // The try starts after the fetch: the window counts from then, not from the ask.
        started() {
          drop(held);
          starts.push(Date.now());
        },
        unused: () => drop(held),
      };
    },
  };
}
