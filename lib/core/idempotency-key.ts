import { nodeCrypto } from '../lazy-crypto';

/** Keys longer than this are hashed: a 900 KB event id must not sit in a store for 7 hours. */
const MAX_PLAIN_KEY = 200;
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The store key of an event: scope, source and id, each length-prefixed so no choice of the three
 * can spell another's key (`"src\0X"`+`"Y"` and `"src"`+`"X\0Y"` stay apart). Long keys become
 * `sha256:<base64url>` of the same unambiguous text.
 */
export function idempotencyKey(scope: string, source: string, id: string): string {
  const key = `${scope.length}:${scope}${source.length}:${source}${id.length}:${id}`;
  const surrogates = SURROGATE.test(key);
  if (key.length <= MAX_PLAIN_KEY && !surrogates) return key;
  // UTF-8 would turn every lone surrogate into U+FFFD, so two different ids could hash (or be stored)
  // alike: keys with surrogates are hashed from their UTF-16 code units, which keep them apart.
  const bytes = surrogates ? Buffer.from(key, 'utf16le') : Buffer.from(key, 'utf8');
  return `sha256:${nodeCrypto().createHash('sha256').update(bytes).digest('base64url')}`;
}

/** 64 random bits per process, then a counter: unique across instances, short, and no syscall per claim. */
let processNonce: string | undefined;
let counter = 0;

/** A token that names one claim, so only its holder can release it. */
export function claimToken(): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  // Drawn at the first claim, not at load: node:crypto costs a cold start 4 ms.
  processNonce ??= nodeCrypto().randomBytes(8).toString('base64url');
  return `${processNonce}.${counter.toString(36)}`;
}
