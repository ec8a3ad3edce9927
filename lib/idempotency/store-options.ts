import { checkOptionKeys } from '../check-option-keys';
import { OptionsError } from '../options-error';

/** An options error of the store named `store` (`MemoryStore`, `RedisStore`, …), code `ERR_SW_STORE`. */
export function storeOptionsError(store: string, message: string): OptionsError {
  return new OptionsError('ERR_SW_STORE', store, message);
}

/**
 * How every store's constructor begins: `options` must be an object (else `notObject` says how to call
 * it), holding only the `known` keys (else a "did you mean").
 */
export function checkStoreOptions(
  options: unknown,
  known: readonly string[],
  store: string,
  notObject: string,
): void {
  if (typeof options !== 'object' || options === null) throw storeOptionsError(store, notObject);
  checkOptionKeys(options, known, store);
}

/** `value` when it is a positive whole number; otherwise throws, naming the option `name`. */
export function wholePositive(store: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw storeOptionsError(store, `${name} must be a positive whole number (got ${String(value)})`);
  }
  return value;
}
