import type { ErrorFingerprint } from './error-fingerprint';

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
