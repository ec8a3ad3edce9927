import { idempotencyKey } from '../idempotency/store-keys';
import { InboxFull } from '../inbox/inbox-full';
import type { Inbox } from '../inbox/inbox';
import type { ResolvedLogger } from '../logger';
import type { DeliveryRecord } from './delivery-record';
import { enqueueDelivery } from './dispatch/enqueue-delivery';
import { deadlineQueue } from './dispatch/deadline-queue';
import type { Outcome } from './dispatch/run-handlers';
import { queuedDelivery, type QueuedDelivery } from '../inbox/queued-delivery';
import { withTimeout } from '../with-timeout';
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
 * Puts the quarantined delivery in the inbox's dead letters (`inbox.quarantine`), bounded by
 * `storeTimeoutMs` as an enqueue is; an outcome as `enqueueDelivery`'s, never a rejection. A
 * quarantine that lands after the bound is harmless: the retry's adds nothing (the key's job id).
 */
async function deadLetterNow(
  settings: QuarantineSettings,
  delivery: QueuedDelivery,
  checkRules: true | undefined,
): Promise<Outcome> {
  const { inbox } = settings;
  if (checkRules === true) delivery.checkRules = true;
  try {
    await withTimeout(
      inbox.quarantine!(delivery),
      settings.storeTimeoutMs,
      `the inbox's quarantine (${inbox.engine})`,
    );
    return { ok: true };
  } catch (error) {
    settings.log.error(
      { eventId: delivery.id, type: delivery.type, err: error },
      'could not keep the quarantined event in the inbox; answering 503 so the Service retries it',
    );
    return { ok: false, errors: [error], retryLater: undefined };
  }
}

/** The enqueue's outcome as it is: the quarantine answers for it itself. */
const asIs = (outcome: Outcome): Outcome => outcome;

/**
 * Keeps an authenticated event whose data this code cannot read in the inbox's dead letters at once
 * (`inbox.quarantine`: reason invalid, running no handler, until a replay after an upgrade reads it),
 * and acknowledges it `quarantined`. An inbox without that method is given it through `enqueue`,
 * marked so its worker holds it to the same checks and dead-letters it at its first try. An inbox
 * that does not confirm is answered 503 as any enqueue is: nothing is acknowledged that is not held.
 */
export function quarantineStep(settings: QuarantineSettings) {
  const results = dispatchResults(settings.retryAfter);
  const enqueueDeadlines = deadlineQueue(settings.storeTimeoutMs);
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
    const checkRules = problem.slug === 'event-rule-violated' ? true : undefined;
    const outcome =
      settings.inbox.quarantine === undefined
        ? await enqueueDelivery(
            settings.inbox,
            key,
            event,
            header,
            enqueueDeadlines,
            settings.log,
            traceparent,
            asIs,
            checkRules,
          )
        : await deadLetterNow(settings, queuedDelivery(key, event, header, traceparent), checkRules);
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
