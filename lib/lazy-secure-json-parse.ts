import type SecureJsonParse from 'secure-json-parse';

let loaded: typeof SecureJsonParse | undefined;

/**
 * `secure-json-parse`, loaded the first time a body could carry a `__proto__` or `constructor` key, or
 * comes already parsed by another middleware: an ordinary delivery never needs it, so a receiver
 * starts without resolving it (issue 36, `npm run bench -- --cold-start`).
 */
export function secureJsonParse(): typeof SecureJsonParse {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, by design
  loaded ??= require('secure-json-parse') as typeof SecureJsonParse;
  return loaded;
}
