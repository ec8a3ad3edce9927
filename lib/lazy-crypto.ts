import type * as NodeCrypto from 'node:crypto';

let loaded: typeof NodeCrypto | undefined;

/**
 * `node:crypto`, loaded the first time a delivery needs it: requiring it costs a cold start about
 * 4 ms, as long as the rest of the receiver together (issue 19, `npm run bench -- --cold-start`).
 */
export function nodeCrypto(): typeof NodeCrypto {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, by design
  loaded ??= require('node:crypto') as typeof NodeCrypto;
  return loaded;
}
