import { checkOptionKeys } from '../check-option-keys';
import { didYouMean } from '../did-you-mean';
import { OptionsError } from '../options-error';

/** The longest handler name: it is part of a store key and a metrics label. */
const MAX_HANDLER_NAME_LENGTH = 128;

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Checks a `name` option: undefined when none was given. */
function checkHandlerName(name: unknown, method: string): string | undefined {
  if (name === undefined) return undefined;
  if (
    typeof name !== 'string' ||
    name.length === 0 ||
    name.length > MAX_HANDLER_NAME_LENGTH ||
    CONTROL.test(name)
  ) {
    const got = typeof name === 'string' ? `a string of ${name.length} characters` : typeof name;
    throw new OptionsError(
      'ERR_SW_ROUTER',
      method,
      `name must be a string of 1 to ${MAX_HANDLER_NAME_LENGTH} characters without control characters (got ${got}); name the handler after what it does, e.g. { name: 'crm' }`,
    );
  }
  return name;
}

/** How a handler registered with `router.on(type, handler, options)` runs. */
export interface OnOptions {
  /**
   * `'newest-wins'`: the handler runs for an event only if it is newer (by `time`, then by event id)
   * than the newest event of the same entity (`event.entity`) it already processed successfully, and
   * never for two events of one entity at once; an older event is skipped and acknowledged as
   * `stale`. Events without an entity or a `time` always run. Needs a store with entity operations
   * (MemoryStore, RedisStore, PostgresStore). Defaults to no ordering: the handler sees every event.
   */
  ordering?: 'newest-wins';
  /**
   * The handler's name, stable across deploys: it keys the handler's recorded success for each event
   * (so a retried event runs only the handlers that have not succeeded yet) and names the handler in
   * logs, metrics and `ctx.handler`. 1 to 128 characters, no control characters. Defaults to the
   * function's own name (`function syncCrm() {}`, `const syncCrm = () => {}`); an anonymous handler
   * is named after its registration (the event type or pattern), and is refused beside another
   * anonymous one of the same registration.
   */
  name?: string;
}

/** `on`'s options once checked. */
export interface CheckedOnOptions {
  ordered: boolean;
  /** The `name` option, if given. */
  name: string | undefined;
}

const KNOWN_KEYS = ['ordering', 'name'] as const;
const ORDERINGS = ['newest-wins'] as const;

function checkOrdering(ordering: unknown): boolean {
  if (ordering === undefined) return false;
  if (ordering === 'newest-wins') return true;
  const hint = typeof ordering === 'string' ? didYouMean(ordering, ORDERINGS) : undefined;
  throw new OptionsError(
    'ERR_SW_ROUTER',
    'on',
    `ordering must be 'newest-wins' (got ${JSON.stringify(ordering) ?? String(ordering)})${hint === undefined ? '' : `; did you mean "${hint}"?`}`,
  );
}

/** Checks `on`'s third argument once, at registration. */
export function checkOnOptions(options: unknown): CheckedOnOptions {
  if (options === undefined) return { ordered: false, name: undefined };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new OptionsError(
      'ERR_SW_ROUTER',
      'on',
      "options must be an object, e.g. { ordering: 'newest-wins' } or { name: 'crm' }",
    );
  }
  checkOptionKeys(options, KNOWN_KEYS, 'on');
  const { ordering, name } = options as OnOptions;
  return { ordered: checkOrdering(ordering), name: checkHandlerName(name, 'on') };
}

/** Checks the `{ name }` that `onAny` and `onUnhandled` take. */
export function checkNameOption(options: unknown, method: string): string | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new OptionsError('ERR_SW_ROUTER', method, "options must be an object, e.g. { name: 'audit' }");
  }
  checkOptionKeys(options, ['name'], method);
  return checkHandlerName((options as { name?: unknown }).name, method);
}
