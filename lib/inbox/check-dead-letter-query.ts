import { checkOptionKeys } from '../check-option-keys';
import { OptionsError } from '../options-error';
import type { ReplayFilter } from './inbox';
import type { ReplayOptions } from './replay-pages';

/** The most dead letters one `deadLetters()` call brings back (and so holds in memory). */
export const MAX_DEAD_LETTERS = 100_000;

/** What {@link checkDeadLettersQuery} gives back: the limit filled in, the type when given. */
export interface DeadLettersQuery {
  limit: number;
  type: string | undefined;
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

/** `deadLetters({ limit?, type? })`, checked: `limit` a whole number from 1 to 100 000 (default 100). */
export function checkDeadLettersQuery(options: unknown): DeadLettersQuery {
  const where = 'inbox.deadLetters';
  if (options === undefined) return { limit: 100, type: undefined };
  if (!isPlainObject(options))
    throw new OptionsError('ERR_SW_OPTION', where, 'takes { limit?, type? } or nothing');
  checkOptionKeys(options, ['limit', 'type'], where);
  const { limit = 100, type } = options as { limit?: unknown; type?: unknown };
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_DEAD_LETTERS)
    throw new OptionsError(
      'ERR_SW_LIMIT',
      where,
      `limit must be a whole number from 1 to ${MAX_DEAD_LETTERS} (got ${String(limit)})`,
    );
  return { limit, type: checkType(type, where) };
}

/** `replay(eventId | { type?, since? })`, checked: `{}` replays every dead letter. */
export function checkReplayTarget(target: unknown): string | ReplayFilter {
  const where = 'inbox.replay';
  if (typeof target === 'string' && target !== '') return target;
  if (!isPlainObject(target))
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      `takes an event id or { type?, since? } ({} for every dead letter) (got ${JSON.stringify(target) ?? String(target)})`,
    );
  checkOptionKeys(target, ['type', 'since'], where);
  const { type, since } = target as { type?: unknown; since?: unknown };
  if (since !== undefined && (!(since instanceof Date) || Number.isNaN(since.getTime())))
    throw new OptionsError('ERR_SW_OPTION', where, `since must be a valid Date (got ${String(since)})`);
  checkType(type, where);
  return target as ReplayFilter;
}

/** `replay`'s second argument, checked: `{ signal?, onProgress?, dryRun? }` or nothing. */
export function checkReplayOptions(options: unknown): ReplayOptions {
  const where = 'inbox.replay';
  if (options === undefined) return {};
  if (!isPlainObject(options))
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      'takes { signal?, onProgress?, dryRun? } as its second argument',
    );
  checkOptionKeys(options, ['signal', 'onProgress', 'dryRun'], where);
  const { signal, onProgress, dryRun } = options as Record<string, unknown>;
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
  return options as ReplayOptions;
}
