import { bytes } from '../../lazy-bytes';
import { OptionsError } from '../../options-error';

const DEFAULT_LIMIT = 1024 * 1024;
/**
 * The whole string must be a size: `'1m'` is not read as 1 byte, it is refused. A fraction only with
 * a unit larger than a byte (`'1.5mb'`), never of a byte (`'1.5'`, `'1.5b'`).
 */
const SIZE = /^(?:\d+\s*b?|\d+(?:\.\d+)?\s*(?:kb|mb|gb))$/i;

/** A byte count, or a string such as `'1mb'`, as a positive whole number of bytes. */
export function parseLimit(limit: unknown, where: string): number {
  if (limit === undefined) return DEFAULT_LIMIT;
  const text = typeof limit === 'string' ? limit.trim() : undefined;
  const parsed = text === undefined ? limit : SIZE.test(text) ? bytes().parse(text) : null;
  if (typeof parsed !== 'number' || !Number.isSafeInteger(parsed) || parsed <= 0) {
    throw new OptionsError(
      'ERR_SW_LIMIT',
      where,
      `limit must be a positive whole number of bytes, or a number with one of the units b, kb, mb, gb such as '512kb' or '1mb' (got ${JSON.stringify(limit)})`,
    );
  }
  return parsed;
}
