import bytes from 'bytes';
import { OptionsError } from '../options-error';

const DEFAULT_LIMIT = 1024 * 1024;

/** A byte count, or a string such as `'1mb'`, as a positive whole number of bytes. */
export function parseLimit(limit: unknown, where: string): number {
  if (limit === undefined) return DEFAULT_LIMIT;
  const parsed = typeof limit === 'string' ? bytes.parse(limit) : limit;
  if (typeof parsed !== 'number' || !Number.isSafeInteger(parsed) || parsed <= 0) {
    throw new OptionsError(
      'ERR_SW_LIMIT',
      where,
      `limit must be a positive number of bytes or a size such as '1mb' (got ${JSON.stringify(limit)})`,
    );
  }
  return parsed;
}
