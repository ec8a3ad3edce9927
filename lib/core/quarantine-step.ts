import { idempotencyKey } from '../idempotency/store-keys';
import { InboxFull } from '../inbox/inbox-full';
import type { Inbox } from '../inbox/inbox';
import type { ResolvedLogger } from '../logger';
import type { DeliveryRecord } from './delivery-record';
import { enqueueDelivery } from './dispatch/enqueue-delivery';
import type { UnreadableEvent } from './event/unreadable-event';
import { dispatchResults, eventAnswer } from './problems';
import type { RateLimitedLog } from '../rate-limited-log';
import type { Answer } from './webhook-request';

/** What the quarantine step needs of the receiver: its inbox and the bounds the dispatcher uses. */
export interface QuarantineSettings {
  inbox: Inbox;
  scope: string;
  storeTimeoutMs: number;
  retryAfter: string;
  log: ResolvedLogger;
  warn: RateLimitedLog;
}

/**
 * Keeps an authenticated event whose data this code cannot read in the inbox, marked so its worker
 * holds it to the same checks (and so dead-letters it at its first try, running no handler, until
 * an upgrade reads it), and acknowledges it `quarantined`. An inbox that does not confirm is answered
 * 503 as any enqueue is: nothing is acknowledged that is not held.
 */
export function quarantineStep(settings: QuarantineSettings) {
  const results = dispatchResults(settings.retryAfter);
  return async function quarantine(
    unreadable: UnreadableEvent,
    header: (name: string) => string | undefined,
    traceparent: string | null,
    record: DeliveryRecord,
  ): Promise<Answer> {
    const { envelope, raw, problem } = unreadable;
    const key = idempotencyKey(settings.scope, envelope.source, envelope.id);
    const event = {
      id: envelope.id,
      type: envelope.type,
      source: envelope.source,
      time: envelope.time ?? null,
      raw,
    };
    const outcome = await enqueueDelivery(
      settings.inbox,
      key,
      event,
      header,
      settings.storeTimeoutMs,
      settings.log,
      traceparent,
      problem.slug === 'event-rule-violated' ? true : undefined,
    );
    if (!outcome.ok) {
      const full = outcome.errors.some((e) => e instanceof InboxFull);
      const result = full ? results.inboxFull() : results.inboxUnavailable();
      record.outcome = result.outcome;
      record.problem = result.problem;
      if (result.shed !== undefined) record.shed = result.shed;
      return result.answer;
    }
    const first = problem.errors?.[0];
    settings.warn(
      'warn',
      'quarantined',
      {
        eventId: envelope.id,
        type: envelope.type,
        field: first?.field ?? problem.field,
        expected: first?.rule,
      },
      `quarantined an event whose data this code cannot read (${problem.detail}); it is kept in the inbox's dead letters (reason invalid) until replayed with code that reads it`,
    );
    record.outcome = 'quarantined';
    return eventAnswer(envelope.id, envelope.type, 'quarantined');
  };
}
