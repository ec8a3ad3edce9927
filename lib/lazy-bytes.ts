import type BytesModule from 'bytes';

let loaded: typeof BytesModule | undefined;

/**
 * `bytes`, loaded the first time a limit is given as a string (`'1mb'`): a number or the default
 * needs none of it, and each package a cold start resolves costs it about as much as 10 KB of code
 * (issue 36, `npm run bench -- --cold-start`).
 */
export function bytes(): typeof BytesModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, by design
  loaded ??= require('bytes') as typeof BytesModule;
  return loaded;
}
