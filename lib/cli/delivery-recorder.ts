import type { EmulatorChange } from '../emulator/emulator-types';
import type { DeliveryEnvelope } from '../events/build-event';
import { createScenarioWriter } from '../events/scenario-writer';
import { escapeControl } from '../logger';
import type { CliContext } from './cli-context';
import { CliFailure, UsageError } from './cli-errors';

/** Events waiting for their attempt's answer; the emulator sends the event before its attempts. */
const PENDING_LIMIT = 1000;

/** The answer's JSON `status`, when the body the emulator kept is JSON with one. */
function bodyStatus(body: string | null): string | null {
  if (body === null) return null;
  try {
    const parsed = JSON.parse(body) as { status?: unknown } | null;
    return typeof parsed?.status === 'string' ? parsed.status : null;
  } catch {
    return null;
  }
}

/**
 * `listen --record`: each answered attempt to our webhook becomes a delivery of the scenario file,
 * with the event as the emulator sent it (redacted) and the answer as its expectation. Takes the
 * changes the emulator streams and our webhook's id.
 */
export function deliveryRecorder(
  ctx: CliContext,
  file: string,
  redact: string | undefined,
): (change: EmulatorChange, webhookId: string) => void {
  const fields = (redact ?? '')
    .split(',')
    .map((field) => field.trim())
    .filter((field) => field !== '');
  if (redact !== undefined && fields.length === 0)
    throw new UsageError('--redact takes data field names, such as --redact badge,department');
  let writer: ReturnType<typeof createScenarioWriter>;
  try {
    writer = createScenarioWriter(file, {
      redact: fields,
      description: 'recorded by service-webhooks listen',
    });
  } catch (error) {
    throw new CliFailure(`cannot write the scenario file ${file}: ${(error as Error).message}`);
  }
  ctx.out.line(ctx.out.dim(escapeControl(`Recording to ${file} (personal fields redacted)`)));
  const pending = new Map<string, DeliveryEnvelope>();
  let full = false;
  return (change, webhookId) => {
    if (change.kind === 'event' && change.webhookIds.includes(webhookId)) {
      pending.delete(change.event.id);
      pending.set(change.event.id, change.event);
      if (pending.size > PENDING_LIMIT) pending.delete(pending.keys().next().value as string);
    }
    if (change.kind !== 'attempt' || change.attempt.webhookId !== webhookId || full) return;
    const { attempt } = change;
    const event = pending.get(attempt.eventId);
    if (event === undefined) return;
    const added = writer.add({
      event,
      at: Date.parse(attempt.at),
      status: attempt.status,
      bodyStatus: bodyStatus(attempt.responseBody),
    });
    if (!added) {
      full = true;
      ctx.out.error(
        ctx.out.red(escapeControl(`The scenario holds its limit of deliveries; ${file} records no more.`)),
      );
    }
  };
}
