import { didYouMean } from './did-you-mean';
import { OptionsError } from './options-error';

/**
 * Rejects an option name the factory does not know, with a "did you mean" hint: JavaScript callers
 * (and spread objects TypeScript does not check) get the safety an object literal has in TypeScript.
 * `known` is built once per factory, at module load.
 */
export function checkOptionKeys(options: object, known: readonly string[], where: string): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const hint = didYouMean(key, known);
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      `unknown option "${key}"${hint === undefined ? '' : `; did you mean "${hint}"?`} Known options: ${known.join(', ')}.`,
    );
  }
}
