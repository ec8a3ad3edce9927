import { checkOptionKeys } from '../check-option-keys';
import { OptionsError } from '../options-error';
import { decodeCursor, type DeadLetterPosition } from './dead-letter-cursor';
import type { ReplayFilter } from './inbox';
import type { ReplayOptions } from './replay-pages';

/** The most dead letters one `deadLetters()` call brings back (and so holds in memory). */
export const MAX_DEAD_LETTERS = 100_000;

/** What {@link checkDeadLettersQuery} gives back: the limit filled in, the type and handler when given. */
export interface DeadLettersQuery {
  limit: number;
  type: string | undefined;
  /** Only dead letters on which this handler has not succeeded. */
  handler: string | undefined;
  /** Only those after this one, newest first: the next page. */
  after: DeadLetterPosition | undefined;
  /** Only those before this one: the page before, still given newest first. */
  before: DeadLetterPosition | undefined;
}

/** A `{ … }` literal: a Date or an array given as the filter is a mistake, not "every dead letter". */
function isPlainObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function checkType(type: unknown, where: string): string | undefined {
  if (type === undefined || (typeof type === 'string' && type !== '')) return type;
  throw new OptionsError(
    'ERR_SW_OPTION',
    where,
    `type must be a non-empty event type such as 'ag.access_pass.issued' (got ${JSON.stringify(type) ?? String(type)})`,
  );
}

/*
 * Every engine checks what `deadLetters` and `replay` are given here, the same way: a misspelt filter
 * key would otherwise be ignored, and `replay({ typ })` would put back every dead letter.
 */

function checkHandlerName(name: unknown, where: string, what: string): string {
  if (typeof name === 'string' && name !== '') return name;
  throw new OptionsError(
    'ERR_SW_OPTION',
    where,
    `${what} must be a handler's name, a non-empty string such as 'welcome-email' (got ${JSON.stringify(name) ?? String(name)})`,
  );
}

/**
 * `deadLetters({ limit?, type?, handler?, after?, before? })`, checked: `limit` a whole number from 1
 * to 100 000 (default 100), `after` or `before` (not both) a dead letter's `cursor`.
 */
export function checkDeadLettersQuery(options: unknown): DeadLettersQuery {
  const where = 'inbox.deadLetters';
  if (options === undefined)
    return { limit: 100, type: undefined, handler: undefined, after: undefined, before: undefined };
  if (!isPlainObject(options))
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      'takes { limit?, type?, handler?, after?, before? } or nothing',
    );
  checkOptionKeys(options, ['limit', 'type', 'handler', 'after', 'before'], where);
  const { limit, type, handler, after, before } = options as Record<string, unknown>;
  if (after !== undefined && before !== undefined)
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      'takes after (the next page) or before (the page before), not both',
    );
  return {
    limit: checkLimit(limit, MAX_DEAD_LETTERS, where),
    type: checkType(type, where),
    handler: handler === undefined ? undefined : checkHandlerName(handler, where, 'handler'),
    after: after === undefined ? undefined : decodeCursor(after, where, 'after'),
    before: before === undefined ? undefined : decodeCursor(before, where, 'before'),
  };
}

/** A page's `limit`: a whole number from 1 to `max`, `100` when not given. */
function checkLimit(limit: unknown = 100, max: number, where: string): number {
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > max)
    throw new OptionsError(
      'ERR_SW_LIMIT',
      where,
      `limit must be a whole number from 1 to ${max} (got ${String(limit)})`,
    );
  return limit;
}

/** The most issues one `issues()` call brings back. */
export const MAX_ISSUES = 1000;

/** `issues({ since?, limit? })`, checked: `limit` a whole number from 1 to 1000 (default 100). */
export function checkIssuesQuery(options: unknown): { since: Date | undefined; limit: number } {
  const where = 'inbox.issues';
  if (options === undefined) return { since: undefined, limit: 100 };
  if (!isPlainObject(options))
    throw new OptionsError('ERR_SW_OPTION', where, 'takes { since?, limit? } or nothing');
  checkOptionKeys(options, ['since', 'limit'], where);
  const { limit, since } = options as { limit?: unknown; since?: unknown };
  return { limit: checkLimit(limit, MAX_ISSUES, where), since: checkSince(since, where) };
}

function checkSince(since: unknown, where: string): Date | undefined {
  if (since !== undefined && (!(since instanceof Date) || Number.isNaN(since.getTime())))
    throw new OptionsError('ERR_SW_OPTION', where, `since must be a valid Date (got ${String(since)})`);
  return since;
}

/** `replay(eventId | { type?, since?, issue? })`, checked: `{}` replays every dead letter. */
export function checkReplayTarget(target: unknown): string | ReplayFilter {
  const where = 'inbox.replay';
  if (typeof target === 'string' && target !== '') return target;
  if (!isPlainObject(target))
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      `takes an event id or { type?, since?, issue? } ({} for every dead letter) (got ${JSON.stringify(target) ?? String(target)})`,
    );
  checkOptionKeys(target, ['type', 'since', 'issue'], where);
  const { type, since, issue } = target as { type?: unknown; since?: unknown; issue?: unknown };
  checkSince(since, where);
  checkType(type, where);
  if (issue !== undefined && (typeof issue !== 'string' || issue === ''))
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      `issue must be an issue's key, as inbox.issues() gives it (got ${JSON.stringify(issue) ?? String(issue)})`,
    );
  return target as ReplayFilter;
}

/**
 * `replay(target, { signal?, onProgress?, dryRun?, handlers? })`, checked. `handlers` a non-empty list
 * of names, only with one event id (the names are checked against that dead letter's handlers when
 * it is read), given back deduplicated in `handlers` (undefined for a plain replay); the rest, for
 * the page walk, in `pages`.
 */
export function checkReplayOptions(
  target: string | ReplayFilter,
  options: unknown,
): { pages: ReplayOptions; handlers: readonly string[] | undefined } {
  const where = 'inbox.replay';
  if (options === undefined) return { pages: {}, handlers: undefined };
  if (!isPlainObject(options))
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      'takes { signal?, onProgress?, dryRun?, handlers? } as its second argument',
    );
  checkOptionKeys(options, ['signal', 'onProgress', 'dryRun', 'handlers'], where);
  const { signal, onProgress, dryRun, handlers } = options as Record<string, unknown>;
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new OptionsError('ERR_SW_OPTION', where, 'signal must be an AbortSignal (from an AbortController)');
  if (onProgress !== undefined && typeof onProgress !== 'function')
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      'onProgress must be a function ({ replayed, matched }) => void',
    );
  if (dryRun !== undefined && typeof dryRun !== 'boolean')
    throw new OptionsError('ERR_SW_OPTION', where, `dryRun must be true or false (got ${String(dryRun)})`);
  const { handlers: _names, ...pages } = options as ReplayOptions;
  return { pages, handlers: checkReplayHandlerNames(target, handlers, where) };
}

function checkReplayHandlerNames(
  target: string | ReplayFilter,
  handlers: unknown,
  where: string,
): readonly string[] | undefined {
  if (handlers === undefined) return undefined;
  if (!Array.isArray(handlers) || handlers.length === 0)
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      "handlers must be a non-empty list of handler names, such as ['welcome-email']",
    );
  if (typeof target !== 'string')
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      "handlers replays one event: give its id, as replay('evt_123', { handlers: ['welcome-email'] })",
    );
  return [...new Set(handlers.map((name: unknown) => checkHandlerName(name, where, 'each of handlers')))];
}
