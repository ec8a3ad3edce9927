/** An error as an issue groups it: its class and its message with what varies per event masked. */
export interface ErrorFingerprint {
  /** The error's class (`TypeError`), or `'Error'` when the message names none. */
  name: string;
  /** The message with quoted values, UUIDs, timestamps, ids and numbers masked. */
  message: string;
}

/** A fingerprint's message is cut here: two errors alike this far are one issue. */
const MAX_MESSAGE = 300;

/** `Name: message`, as the worker keeps a try's error (`TypeError: x is not a function`). */
const NAMED = /^([A-Z][\w$]*): ([\s\S]*)$/;

// In this order: a quoted value or a UUID may hold digits that the later masks would split.
const MASKS: readonly [RegExp, string][] = [
  [/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '<value>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?/g, '<time>'],
  // A word holding a digit: a number alone, an id otherwise (`ap_123`, `evt01HX`, `10.0.0.1:6379`).
  [/[\w.:-]*\d(?:[\w.:-]*\w)?/g, '\0'],
];

function maskWord(word: string): string {
  return /^\d+(?:\.\d+)?$/.test(word) ? '<n>' : '<id>';
}

/**
 * The fingerprint of a try's error as the dead letter keeps it (`lastError`): so "timeout after
 * 5012 ms for ap_123" and "timeout after 5301 ms for ap_9" are one issue, and a message that names
 * the failing record does not make one issue per record.
 */
export function errorFingerprint(lastError: string | null | undefined): ErrorFingerprint {
  const text = (lastError ?? '').trim();
  const named = NAMED.exec(text);
  let message = named?.[2] ?? text;
  for (const [pattern, mask] of MASKS)
    message = message.replace(pattern, (found) => (mask === '\0' ? maskWord(found) : mask));
  message = message.replace(/\s+/g, ' ').trim().slice(0, MAX_MESSAGE);
  return { name: named?.[1] ?? 'Error', message: message === '' ? '(no message)' : message };
}
