import type * as Zod from 'zod';

let loaded: typeof Zod.z | undefined;

/**
 * zod, loaded the first time a schema is needed. The fast paths decide the events the Service
 * ordinarily sends without it; zod (95 modules) is what explains an unusual one, so a receiver
 * starts without paying for it.
 */
export function zod(): typeof Zod.z {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, by design
  loaded ??= (require('zod') as typeof Zod).z;
  return loaded;
}
