import { ConsoleValidationError } from './console-errors';

/** Characters that would make an id more than one path segment, or a different one once decoded. */
const NOT_ONE_SEGMENT = /[/\\?#%\s\p{Cc}]/u;
const MAX_ID_LENGTH = 256;

/**
 * An id as one URL path segment, refused before anything is signed or sent: `'..'` or `'a/b'` would
 * point the signed request at another path (`DELETE /v1/console/`).
 */
export function webhookIdSegment(method: string, id: unknown): string {
  if (typeof id !== 'string' || id === '') {
    throw new ConsoleValidationError(method, 'id', 'must be a non-empty string');
  }
  if (id === '.' || id === '..' || id.length > MAX_ID_LENGTH || NOT_ONE_SEGMENT.test(id)) {
    const shown = id.length <= 64 ? JSON.stringify(id) : `${id.length} characters`;
    throw new ConsoleValidationError(
      method,
      'id',
      `must be a webhook id as the list returns it: at most ${MAX_ID_LENGTH} characters, not "." or "..", without / \\ ? # %, spaces or control characters (got ${shown})`,
    );
  }
  return encodeURIComponent(id);
}
