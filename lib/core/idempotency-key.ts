import { createHash, randomBytes } from 'node:crypto';

/** Keys longer than this are hashed: a 900 KB event id must not sit in a store for 7 hours. */
const MAX_PLAIN_KEY = 200;

/**
 * The store key of an event: scope, source and id, each length-prefixed so no choice of the three
 * can spell another's key (`"src\0X"`+`"Y"` and `"src"`+`"X\0Y"` stay apart). Long keys become
 * `sha256:<base64url>` of the same unambiguous text.
 */
export function idempotencyKey(scope: string, source: string, id: string): string {
  const key = `${scope.length}:${scope}${source.length}:${source}${id.length}:${id}`;
  return key.length <= MAX_PLAIN_KEY ? key : `sha256:${createHash('sha256').update(key).digest('base64url')}`;
}

/** 64 random bits per process, then a counter: unique across instances, short, and no syscall per claim. */
const PROCESS_NONCE = randomBytes(8).toString('base64url');
let counter = 0;

/** A token that names one claim, so only its holder can release it. */
export function claimToken(): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${PROCESS_NONCE}.${counter.toString(36)}`;
}
