import { didYouMean } from '../did-you-mean';
import { EVENT_TYPES, isEventType, type EventType } from '../events/catalogue';
import { closestEventName } from '../events/closest-event-name';
import { UsageError } from './cli-errors';

/** One event type of the catalogue, or a usage error with the closest name. */
export function eventType(text: string): EventType {
  if (isEventType(text)) return text;
  const hint = didYouMean(text, EVENT_TYPES);
  throw new UsageError(
    `unknown event type "${text}"${hint === undefined ? '' : `; did you mean "${hint}"?`} (\`service-webhooks trigger --help\` lists them)`,
  );
}

/** `--events a,b` or `--events 'ag.access_pass.*'`; all types when absent. */
export function selectEvents(list: string | undefined): EventType[] {
  if (list === undefined || list.trim() === '' || list.trim() === '*') return [...EVENT_TYPES];
  const chosen = new Set<EventType>();
  for (const item of list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!item.includes('*')) {
      chosen.add(eventType(item));
      continue;
    }
    const pattern = new RegExp(`^${item.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    const matched = EVENT_TYPES.filter((type) => pattern.test(type));
    if (matched.length === 0) {
      const hint = closestEventName(item);
      throw new UsageError(
        `--events pattern "${item}" matches no event type${hint === undefined ? '' : `; did you mean "${hint}"?`}`,
      );
    }
    for (const type of matched) chosen.add(type);
  }
  return [...chosen];
}
