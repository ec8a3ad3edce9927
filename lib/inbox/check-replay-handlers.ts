import { didYouMean } from '../did-you-mean';
import type { EventRouter } from '../events/event-router';
import { OptionsError } from '../options-error';
import type { DeadLetter } from './inbox';

/**
 * Refuses a replay naming a handler the dead letter does not know: one it recorded (it ran in the
 * job), or, when a worker's router is known in this process, one that router runs for the event (a
 * handler added since). A name that is neither is a typo: said with the closest known name.
 */
export function checkReplayHandlers(
  letter: DeadLetter,
  names: readonly string[],
  routers: Iterable<EventRouter>,
): void {
  const known = new Set(Object.keys(letter.handlers ?? {}));
  for (const router of routers)
    for (const name of router.match(letter.delivery.type).names.values()) known.add(name);
  for (const name of names) {
    if (known.has(name)) continue;
    const hint = didYouMean(name, known);
    throw new OptionsError(
      'ERR_SW_OPTION',
      'inbox.replay',
      `the dead letter of ${letter.delivery.id} has no handler named '${name}'${hint === undefined ? '' : ` (did you mean '${hint}'?)`}; ${
        known.size === 0
          ? 'it recorded none (its job ran no handler, or an older version wrote it): replay it without handlers'
          : `its handlers: ${[...known].sort().join(', ')}`
      }`,
    );
  }
}
