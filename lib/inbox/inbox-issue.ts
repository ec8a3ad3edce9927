import { createHash } from 'node:crypto';

/**
 * Dead letters that failed alike: the same event type, the same handler (or the whole event) and
 * the same error fingerprint. Read with {@link Inbox.issues}; replayed with `replay({ issue: key })`.
 */
export interface InboxIssue {
  /** Stable across engines, processes and versions of the message's varying parts: the issue's id. */
  key: string;
  /** The event type of its dead letters. */
  type: string;
  /** The handler that failed (from the dead letter's per-handler state), or null: the whole event. */
  handler: string | null;
  /** The error's class and its message with ids, numbers, UUIDs, timestamps and quoted values masked. */
  error: ErrorFingerprint;
  /** How many dead letters it holds now. */
  count: number;
  /** When the oldest of them failed. */
  firstSeen: Date;
  /** When the newest of them failed. */
  lastSeen: Date;
  /** CloudEvent ids of a few of them, newest first (at most 5). */
  sampleEventIds: string[];
}

/** Which issues {@link Inbox.issues} reads. */
export interface IssuesQuery {
  /** Only issues with a dead letter that failed at or after this time. Defaults to all. */
  since?: Date;
  /** At most this many, the most recent first: a whole number from 1 to 1000. Defaults to `100`. */
  limit?: number;
}

/** What became of an issue, as `startWorker({ onIssue })` is told once across every worker. */
export interface IssueAlert {
  /**
   * `opened`: its first dead letter; `grew`: its count reached `threshold` (10, 100, 1000, …);
   * `resolved`: its last dead letter was replayed and processed, or removed.
   */
  transition: 'opened' | 'grew' | 'resolved';
  /** The power of ten its count reached (`1` when opened, `0` when resolved). */
  threshold: number;
  /** The issue as it was read; on `resolved`, as it was last seen open (its count then). */
  issue: InboxIssue;
}

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

/** A field an InvalidEventError names: `Event data field "data.readers.0.id"`, `CloudEvent attribute "time"`. */
const FIELD_PATH = /\b(field|attribute) "([\w$.[\]()-]{1,200})"/g;

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
  // An event this code cannot read is grouped by the field at fault (`Event data field "data.x" must
  // be …`): the path is kept, not masked as a quoted value; an index in it is masked as a number.
  if (named?.[1] === 'InvalidEventError')
    message = message.replace(
      FIELD_PATH,
      (_, what: string, path: string) => `${what} ${path.replace(/\d+/g, '<n>')}`,
    );
  for (const [pattern, mask] of MASKS)
    message = message.replace(pattern, (found) => (mask === '\0' ? maskWord(found) : mask));
  message = message.replace(/\s+/g, ' ').trim().slice(0, MAX_MESSAGE);
  return { name: named?.[1] ?? 'Error', message: message === '' ? '(no message)' : message };
}

/** One issue a dead letter belongs to. */
export interface IssueRef {
  key: string;
  handler: string | null;
  error: ErrorFingerprint;
}

/** What a dead letter is grouped by: its type, its error and, when kept, each handler's state. */
export interface GroupedLetter {
  delivery: { type: string };
  lastError: string | null;
  /** Each handler's state (issue 30): a handler that did not succeed is an issue of its own. */
  handlers?: Record<string, { ok: boolean; attempts?: number; lastError?: string | undefined }> | undefined;
}

/** The issue's id: the same on every engine and process for the same type, handler and fingerprint. */
export function issueKey(type: string, handler: string | null, error: ErrorFingerprint): string {
  const text = JSON.stringify([type, handler, error.name, error.message]);
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function refOf(type: string, handler: string | null, lastError: string | null | undefined): IssueRef {
  const error = errorFingerprint(lastError);
  return { key: issueKey(type, handler, error), handler, error };
}

/**
 * The issues a dead letter belongs to: one per handler that had not succeeded, when the letter keeps
 * each handler's state; else one for the whole event (`handler: null`).
 */
export function issueRefsOf(letter: GroupedLetter): IssueRef[] {
  const { type } = letter.delivery;
  const handlers = letter.handlers;
  if (typeof handlers === 'object' && handlers !== null) {
    const failing = Object.entries(handlers).filter(([, state]) => state?.ok !== true);
    if (failing.length > 0)
      return failing.map(([name, state]) => refOf(type, name, state.lastError ?? letter.lastError));
  }
  return [refOf(type, null, letter.lastError)];
}

/** How many event ids an issue keeps as samples. */
export const SAMPLES = 5;
/**
 * The most distinct issues one read tracks: past it, dead letters of new issues are not counted (a
 * fingerprint that masks too little would otherwise grow the tally with the dead letters).
 */
export const MAX_TRACKED_ISSUES = 10_000;

/** Issues counted from dead letters (or from groups of them) as a walk reads them. */
export interface IssueTally {
  /** Counts `count` dead letters of `ref` (sample ids newest first) failed between the two times. */
  add(
    type: string,
    ref: IssueRef,
    group: { count: number; firstSeen: Date; lastSeen: Date; sampleEventIds: readonly string[] },
  ): void;
  /** The issues, newest `lastSeen` first, at most `limit`, those seen at or after `since`. */
  list(query: { since?: Date | undefined; limit: number }): InboxIssue[];
}

export function issueTally(): IssueTally {
  const issues = new Map<string, InboxIssue>();
  return {
    add(type, ref, group) {
      const known = issues.get(ref.key);
      if (known === undefined) {
        if (issues.size >= MAX_TRACKED_ISSUES) return;
        issues.set(ref.key, {
          key: ref.key,
          type,
          handler: ref.handler,
          error: ref.error,
          count: group.count,
          firstSeen: group.firstSeen,
          lastSeen: group.lastSeen,
          sampleEventIds: group.sampleEventIds.slice(0, SAMPLES),
        });
        return;
      }
      known.count += group.count;
      if (group.firstSeen < known.firstSeen) known.firstSeen = group.firstSeen;
      // Samples stay the newest: the group's go first when it is the newer.
      const newer = group.lastSeen > known.lastSeen;
      if (newer) known.lastSeen = group.lastSeen;
      const samples = newer
        ? [...group.sampleEventIds, ...known.sampleEventIds]
        : [...known.sampleEventIds, ...group.sampleEventIds];
      known.sampleEventIds = [...new Set(samples)].slice(0, SAMPLES);
    },
    list({ since, limit }) {
      return [...issues.values()]
        .filter((issue) => since === undefined || issue.lastSeen >= since)
        .sort((a, b) => b.lastSeen.getTime() - a.lastSeen.getTime() || (a.key < b.key ? -1 : 1))
        .slice(0, limit);
    },
  };
}
