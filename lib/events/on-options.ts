import { checkOptionKeys } from '../check-option-keys';
import { didYouMean } from '../did-you-mean';
import { OptionsError } from '../options-error';

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
}

const KNOWN_KEYS = ['ordering'] as const;
const ORDERINGS = ['newest-wins'] as const;

/** Checks `on`'s third argument once, at registration; true when the handler is ordered. */
export function checkOnOptions(options: unknown): boolean {
  if (options === undefined) return false;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new OptionsError(
      'ERR_SW_ROUTER',
      'on',
      "options must be an object, e.g. { ordering: 'newest-wins' }",
    );
  }
  checkOptionKeys(options, KNOWN_KEYS, 'on');
  const { ordering } = options as OnOptions;
  if (ordering === undefined) return false;
  if (ordering === 'newest-wins') return true;
  const hint = typeof ordering === 'string' ? didYouMean(ordering, ORDERINGS) : undefined;
  throw new OptionsError(
    'ERR_SW_ROUTER',
    'on',
    `ordering must be 'newest-wins' (got ${JSON.stringify(ordering) ?? String(ordering)})${hint === undefined ? '' : `; did you mean "${hint}"?`}`,
  );
}
