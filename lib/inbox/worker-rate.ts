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
