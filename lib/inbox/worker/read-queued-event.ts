import { checkEventRules } from '../../events/event-rules';
import { InvalidEventError } from '../../events/invalid-event-error';
import { normalizeEvent } from '../../events/normalize-event';
import type { AnyWebhookEvent } from '../../events/webhook-event';
import type { QueuedDelivery } from '../queued-delivery';
import { parseCloudEventEnvelope } from '../../core/event/cloud-event-envelope';
import { parseJsonText } from '../../core/event/parse-json-body';
import { decodeBase64Data } from '../../core/event/read-event';
import type { DeadLetter } from '../inbox';
import { errorMessage } from './error-message';

/**
 * The stored envelope read again, exactly as the receiver read it (the same parse, at any depth),
 * with the code deployed now: a quarantined event this code still cannot read throws
 * {@link InvalidEventError} again, and one a strict receiver quarantined for spec rules 2–5 is held
 * to them again (`delivery.checkRules`).
 */
export function readQueuedEvent(delivery: QueuedDelivery): AnyWebhookEvent {
  let raw: unknown;
  try {
    raw = parseJsonText(delivery.envelope);
  } catch {
    throw new InvalidEventError({
      slug: 'invalid-json',
      detail: 'The queued envelope is not JSON text; it was not queued by this receiver.',
      field: 'envelope',
    });
  }
  const envelope = parseCloudEventEnvelope(raw);
  const data = envelope.data_base64 != null ? decodeBase64Data(envelope.data_base64) : envelope.data;
  const event = normalizeEvent(envelope, data, raw as Record<string, unknown>);
  if (delivery.checkRules === true) {
    const violations = checkEventRules(event.type, event.layout, event.data);
    if (violations.length > 0)
      throw new InvalidEventError({
        slug: 'event-rule-violated',
        detail: `${violations[0]!.message} (spec ${violations[0]!.rule}).`,
        field: violations[0]!.field,
        errors: violations.map((v) => ({ field: v.field, rule: `${v.message} (spec ${v.rule})` })),
      });
  }
  return event;
}

/** How the worker writes the error of a try that could not read its event (`errorMessage`). */
const UNREADABLE = 'InvalidEventError: ';

/**
 * Why a dead letter is one: `invalid` when its last try could not read the event (a quarantined
 * event, or one the code deployed then no longer reads), else `failed`. An invalid one is read again
 * with the code deployed now, so `problem` says what is still wrong, and is absent once this code
 * reads it: then a replay runs it.
 */
export function deadLetterReason(
  delivery: QueuedDelivery,
  lastError: string | null,
): Pick<DeadLetter, 'reason' | 'problem'> {
  if (lastError?.startsWith(UNREADABLE) !== true) return { reason: 'failed' };
  try {
    readQueuedEvent(delivery);
    return { reason: 'invalid' };
  } catch (error) {
    if (!(error instanceof InvalidEventError)) return { reason: 'invalid' };
    const first = error.errors?.[0];
    return {
      reason: 'invalid',
      problem: { field: first?.field ?? error.field ?? '(body)', expected: first?.rule ?? error.message },
    };
  }
}

/**
 * The error a quarantined delivery's dead letter keeps, as the worker's try would write it (so the
 * letter is of the issue a try of it makes, and `deadLetterReason` reads it `invalid`): the stored
 * envelope read again with the code deployed.
 */
export function unreadableError(delivery: QueuedDelivery): string {
  try {
    readQueuedEvent(delivery);
  } catch (error) {
    if (error instanceof InvalidEventError) return errorMessage(error);
  }
  // Read here but not by the receiver (it quarantines only what it could not read): kept invalid,
  // with no problem left, so a replay runs it.
  return `${UNREADABLE}the receiver could not read this event's data; this code reads it, so a replay runs it`;
}
