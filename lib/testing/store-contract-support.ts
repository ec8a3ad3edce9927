// Pieces of runStoreContract's checks (store-contract.ts).
import { checkOptionKeys } from '../check-option-keys';
import { OptionsError } from '../options-error';

const KNOWN_KEYS = ['shortMs', 'claimants', 'makeUnavailableStore', 'close'] as const;

/** Refuses what the contract cannot run with, before any suite is registered. */
export function checkContractArguments(name: unknown, makeStore: unknown, options: object): void {
  const fail = (message: string) => {
    throw new OptionsError('ERR_SW_OPTION', 'runStoreContract', message);
  };
  if (typeof name !== 'string' || name === '') fail('name must be a non-empty string');
  if (typeof makeStore !== 'function')
    fail('makeStore must be a function returning a store (or a promise of one)');
  if (typeof options !== 'object' || options === null) fail('options must be an object');
  checkOptionKeys(options, KNOWN_KEYS, 'runStoreContract');
  const { shortMs, claimants, makeUnavailableStore, close } = options as Record<string, unknown>;
  if (shortMs !== undefined && !(Number.isSafeInteger(shortMs) && (shortMs as number) > 0))
    fail(`shortMs must be a positive whole number of milliseconds (got ${String(shortMs)})`);
  if (claimants !== undefined && !(Number.isSafeInteger(claimants) && (claimants as number) >= 2))
    fail(`claimants must be a whole number of at least 2 (got ${String(claimants)})`);
  for (const [key, value] of Object.entries({ makeUnavailableStore, close }))
    if (value !== undefined && typeof value !== 'function') fail(`${key} must be a function`);
}

/** Keys a store must keep apart and hold faithfully: pairs that differ in one odd character. */
export const ODD_KEYS: readonly string[] = [
  '',
  'a\u0000b',
  'a\u0000c',
  'K',
  'k',
  'emoji 😀 é',
  'lone \uD800',
  'lone \uDC00',
  '{hash-tag}*?[]',
  'line\nbreak',
  '#sha256:0000',
  'x'.repeat(10_000),
  `${'x'.repeat(9_999)}y`,
];

/** How a store call ended within `ms`: resolved, rejected, threw synchronously, or still pending. */
export async function settledWithin(call: () => Promise<unknown>, ms: number): Promise<string> {
  let pending: Promise<unknown>;
  try {
    pending = call();
  } catch {
    return 'threw synchronously';
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still pending'), ms)));
  const settled = pending.then(
    () => 'resolved',
    (error: unknown) => (error instanceof Error ? 'rejected' : 'rejected with a non-Error'),
  );
  const result = await Promise.race([settled, late]);
  clearTimeout(timer);
  return result;
}

/** The test globals a group of the contract's cases uses: jest's, or any runner's with the same shape. */
export interface ContractGlobals {
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
  expect(actual: unknown): { toBe(expected: unknown): void; toEqual(expected: unknown): void };
}
