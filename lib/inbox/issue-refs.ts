import { createHash } from 'node:crypto';
import { errorFingerprint, type ErrorFingerprint } from './error-fingerprint';

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
