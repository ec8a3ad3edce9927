import { nodeCrypto } from '../lazy-crypto';
import type { EntityPosition } from './entity-ordering-store';

/*
 * Every key a store holds is built here, in two layers that deployed ledgers depend on byte for byte
 * (a Redis or PostgreSQL written before an upgrade must still find its keys after it):
 * - `idempotencyKey`: what the receiver hands any store, for an event (scope, source, id) and for an
 *   ordered entity (scope, kind, id). Long or surrogate-bearing keys become `sha256:<base64url>`.
 * - `storedKey` / `storedPosition`: what a shared store writes of such a key, or of an event id in a
 *   position. Long or unstorable keys become `#sha256:<hex>`, a form no plain key can take.
 * The two hashed forms differ for history, not for a reason: unifying them would orphan stored keys.
 */

/** Keys longer than this are hashed: a 900 KB event id must not sit in a store for 7 hours. */
const MAX_PLAIN_KEY = 200;
/** Any surrogate, paired or lone: such keys are hashed from their UTF-16 code units. */
const SURROGATE = /[\uD800-\uDFFF]/;

/** Keys past this many UTF-16 code units are stored as their hash. */
const LONGEST_STORED_PLAIN_KEY = 256;
const STORED_HASH = '#sha256:';
/** In `u` mode a paired surrogate is one code point outside this range, so only lone ones match. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Hashing the UTF-16 code units, not the UTF-8 bytes, keeps two keys that differ only in a lone
 * surrogate apart: UTF-8 would turn both into U+FFFD.
 */
function sha256(text: string, encoding: 'utf8' | 'utf16le', digest: 'base64url' | 'hex'): string {
  return nodeCrypto().createHash('sha256').update(Buffer.from(text, encoding)).digest(digest);
}

/*
 * The last key's scope and source, and the text they start a key with: a Service sends its events
 * from one source, so the next key nearly always starts the same. Comparing the source costs less than
 * spelling two lengths and four concatenations again, and the key is then a shorter rope to flatten
 * (callgrind: ~350 instructions a key fewer, a 50-character source and a UUID id, fresh strings as
 * JSON.parse makes them). Holds one source at a time, at most the body limit.
 */
let lastScope: string | undefined;
let lastSource: string | undefined;
let lastPrefix = '';

/**
 * The store key of an event, or of an ordered entity: scope, source (or entity kind) and id, each
 * length-prefixed so no choice of the three can spell another's key (`"src\0X"`+`"Y"` and
 * `"src"`+`"X\0Y"` stay apart). Long keys become `sha256:<base64url>` of the same unambiguous text.
 */
export function idempotencyKey(scope: string, source: string, id: string): string {
  if (source !== lastSource || scope !== lastScope) {
    lastPrefix = `${scope.length}:${scope}${source.length}:${source}`;
    // Flattened once here (reading a character does it), not walked as a rope by every key's flatten.
    lastPrefix.charCodeAt(0);
    lastScope = scope;
    lastSource = source;
  }
  const key = `${lastPrefix}${id.length}:${id}`;
  const surrogates = SURROGATE.test(key);
  if (key.length <= MAX_PLAIN_KEY && !surrogates) return key;
  return `sha256:${sha256(key, surrogates ? 'utf16le' : 'utf8', 'base64url')}`;
}

/**
 * The form of `key` a shared store writes. A plain key is kept as it is, readable in `redis-cli` or
 * `psql`; a long one, or one a server cannot hold faithfully, becomes a hash of its UTF-16 code
 * units (PostgreSQL text cannot hold NUL at all). A plain key that starts like a hashed one is hashed
 * too, so the two forms never meet.
 */
export function storedKey(key: string): string {
  const plain =
    key.length <= LONGEST_STORED_PLAIN_KEY &&
    !LONE_SURROGATE.test(key) &&
    !key.includes('\u0000') &&
    !key.startsWith('#');
  if (plain) return key;
  return STORED_HASH + sha256(key, 'utf16le', 'hex');
}

/**
 * A position as a shared store writes and compares it: the time's fixed-width digits, then the event
 * id in its stored form (a long or odd id becomes its hash, which still tells ids apart, so ties stay
 * broken the same way whichever delivery arrives first).
 */
export function storedPosition(position: EntityPosition): string {
  return `${position.time}|${storedKey(position.eventId)}`;
}

/**
 * Whether stored position `a` is at or after `b` in the one order every store keeps: their UTF-8
 * bytes, as Redis compares strings and PostgreSQL `COLLATE "C"` does. Text without surrogates, nearly
 * every position, sorts by UTF-16 code units as by UTF-8 bytes, so it compares as strings with no
 * bytes built; a code point past U+FFFF sorts below U+E000 in UTF-16 but above it in UTF-8.
 */
export function positionAtOrAfter(a: string, b: string): boolean {
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a >= b;
  return Buffer.compare(Buffer.from(a), Buffer.from(b)) >= 0;
}
