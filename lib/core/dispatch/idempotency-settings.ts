import { checkOptionKeys } from '../../check-option-keys';
import type { IdempotencyStore } from '../../idempotency/idempotency-store';
import { OptionsError } from '../../options-error';
import type { IdempotencyOptions } from '../../idempotency/idempotency-options';

/*
 * How the `idempotency` option is read (issue 23): a bare store, `false`, or the nested settings;
 * and the flat names it replaced, refused with their new place.
 */

export const STORE_METHODS = ['claim', 'markDone', 'release', 'get'] as const;

const IDEMPOTENCY_KEYS = ['store', 'scope', 'leaseMs', 'retentionMs', 'timeoutMs'] as const;

/** The flat names of 0.x before issue 23, and where each lives now. */
const MOVED_OPTIONS: Readonly<Record<string, string>> = {
  name: 'idempotency: { scope }',
  leaseMs: 'idempotency: { leaseMs }',
  retentionMs: 'idempotency: { retentionMs }',
  storeTimeoutMs: 'idempotency: { timeoutMs } (and bearerTokensTimeoutMs for a bearerTokens function)',
};

/** Throws, naming the new place, when an option of the old flat layout is passed. */
export function checkMovedOptions(options: object, where: string): void {
  for (const key of Object.keys(options)) {
    const place = MOVED_OPTIONS[key];
    if (place === undefined) continue;
    throw new OptionsError('ERR_SW_OPTION', where, `option "${key}" has moved; did you mean ${place}?`);
  }
}

/** A store given bare, told apart from the settings object by its methods. */
function isStore(value: object): boolean {
  return STORE_METHODS.some((method) => method in value);
}

/** The settings the `idempotency` option stands for; a store or `false` is short for `{ store }`. */
export function idempotencySettings(value: unknown, where: string): IdempotencyOptions {
  if (value === undefined || value === false) return { store: value };
  if (typeof value === 'object' && value !== null && !isStore(value)) {
    if ('name' in value) {
      throw new OptionsError(
        'ERR_SW_OPTION',
        `${where} idempotency`,
        'unknown option "name"; did you mean "scope"?',
      );
    }
    checkOptionKeys(value, IDEMPOTENCY_KEYS, `${where} idempotency`);
    // Written out but undefined: a store that was meant to be there (an unset variable, an import
    // cycle). A silent MemoryStore would forget every event on restart and share nothing.
    if ('store' in value && value.store === undefined) {
      throw new OptionsError(
        'ERR_SW_STORE',
        `${where} idempotency`,
        'store is missing (undefined): give a store ({ store: new RedisStore(…) }), false to turn remembering off, or leave idempotency out for the default MemoryStore',
      );
    }
    return value as IdempotencyOptions;
  }
  return { store: value as IdempotencyStore };
}
