import { didYouMean } from '../did-you-mean';
import { EVENT_PATTERNS, EVENT_TYPES } from './catalogue';

const NAMES: readonly string[] = [...EVENT_TYPES, ...EVENT_PATTERNS.keys()];

/** The catalogue's type or pattern closest to `text`: the one hint `.on()` and the CLI's `--events` give. */
export function closestEventName(text: string): string | undefined {
  return didYouMean(text, NAMES);
}
