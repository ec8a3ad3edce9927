import { createHash } from 'node:crypto';

/** Keys past this many UTF-16 code units are stored as their hash. */
const LONGEST_PLAIN_KEY = 256;
const HASHED = '#sha256:';
/** In `u` mode a paired surrogate is one code point outside this range, so only lone ones match. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * The form of `key` a shared store writes. A plain key is kept as it is, readable in `redis-cli` or
 * `psql`; a long one, or one a server cannot hold faithfully, becomes a hash of its UTF-16 code
 * units. Hashing the code units, not the UTF-8 bytes, keeps two keys that differ only in a lone
 * surrogate distinct (UTF-8 would turn both into U+FFFD), and PostgreSQL text cannot hold NUL at all.
 * A plain key that starts like a hashed one is hashed too, so the two forms never meet.
 */
export function storedKey(key: string): string {
  const plain =
    key.length <= LONGEST_PLAIN_KEY &&
    !LONE_SURROGATE.test(key) &&
    !key.includes('\u0000') &&
    !key.startsWith('#');
  if (plain) return key;
  return HASHED + createHash('sha256').update(key, 'utf16le').digest('hex');
}
