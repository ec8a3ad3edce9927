import type { EventType } from '../events/catalogue';
import { checkEventRules } from '../events/event-rules';
import { InvalidEventError } from '../events/invalid-event-error';
import { normalizeEvent } from '../events/normalize-event';
import type { Layout } from '../events/webhook-event';
import { buildEvent } from '../events/build-event';
import { UsageError } from './cli-errors';

/**
 * Reads the event `trigger` is about to send as a receiver would (envelope, layout, data types, the
 * spec's per-type rules): a value the receiver would refuse (400) is a usage error here, instead of a
 * delivery the emulator retries for six hours.
 */
export function checkTriggerData(type: EventType, layout: Layout, data: Record<string, unknown>): void {
  const envelope = buildEvent(type, data as never, { layout }) as unknown as Record<string, unknown>;
  let problem: string | undefined;
  try {
    const event = normalizeEvent(envelope as never, envelope.data, envelope);
    const [first] = checkEventRules(event.type, event.layout, event.data);
    if (first !== undefined) problem = `${first.message} (spec ${first.rule})`;
  } catch (error) {
    if (!(error instanceof InvalidEventError)) throw error;
    problem = error.message.replace(/\.$/, '');
  }
  if (problem !== undefined)
    throw new UsageError(`--set: ${problem}; a receiver would refuse this ${type} (400), so it was not sent`);
}
