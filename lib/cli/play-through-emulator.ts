import type { AttemptRecord } from '../emulator/emulator-types';
import type { Scenario, ScenarioDelivery } from '../events/scenario';
import { escapeControl } from '../logger';
import type { CliContext } from './cli-context';
import { CliFailure } from './cli-errors';
import type { EmulatorClient } from './emulator-client';

const POLL_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function answerStatus(attempt: AttemptRecord): string | null {
  try {
    const body = JSON.parse(attempt.responseBody ?? '') as { status?: unknown } | null;
    return typeof body?.status === 'string' ? body.status : null;
  } catch {
    return null;
  }
}

/** What did not match, in words; undefined when the expectation holds. */
function mismatch(delivery: ScenarioDelivery, attempt: AttemptRecord): string | undefined {
  const { expect } = delivery;
  const wrong: string[] = [];
  if (expect?.status !== undefined && attempt.status !== expect.status) wrong.push(`status ${expect.status}`);
  if (expect?.body !== undefined && answerStatus(attempt) !== expect.body.status)
    wrong.push(`body.status "${expect.body.status}"`);
  if (wrong.length === 0) return undefined;
  const got =
    attempt.status === null
      ? `no answer (${attempt.error ?? 'unknown'})`
      : `${attempt.status} ${(attempt.responseBody ?? '').slice(0, 300)}`;
  return `expected ${wrong.join(' and ')}, got ${got}`;
}

/**
 * `trigger --scenario`: each delivery (then its repeats) through the emulator, which retries as the
 * Service does; the next is sent once every webhook's delivery of this one is acknowledged or dropped,
 * so the order holds. The last attempt to each webhook is checked against the expectation; the first
 * mismatch fails the command, naming the delivery's index and the answer.
 */
export async function playThroughEmulator(
  ctx: CliContext,
  client: EmulatorClient,
  scenario: Scenario,
  options: { timing: 'fast' | 'original'; timeoutMs: number },
): Promise<void> {
  for (const [index, delivery] of scenario.deliveries.entries()) {
    if (options.timing === 'original' && (delivery.delayMs ?? 0) > 0) await sleep(delivery.delayMs as number);
    for (let repeat = 0; repeat <= (delivery.repeat ?? 0); repeat++) {
      const { event } = delivery;
      const which = `delivery ${index}${repeat === 0 ? '' : ` (repeat ${repeat})`}, ${event.type} [${event.id}]`;
      const before = (await client.event(event.id).catch(() => undefined))?.deliveries.length ?? 0;
      const sent = await client.deliver({ event, layout: delivery.layout });
      if (sent.webhookIds.length === 0)
        throw new CliFailure(
          `${which}: no verified webhook receives it; is \`service-webhooks listen\` running and its handshake verified?`,
        );
      const deadline = Date.now() + options.timeoutMs;
      let view = await client.event(event.id);
      while (view.deliveries.slice(before).some((d) => d.state === 'pending')) {
        if (Date.now() > deadline)
          throw new CliFailure(
            `${which}: still being retried after ${options.timeoutMs} ms (--timeout); is your app answering?`,
          );
        await sleep(POLL_MS);
        view = await client.event(event.id);
      }
      for (const webhookId of sent.webhookIds) {
        const last = view.attempts.filter((a) => a.webhookId === webhookId).at(-1);
        if (last === undefined) throw new CliFailure(`${which}: no attempt was made to webhook ${webhookId}`);
        const wrong = mismatch(delivery, last);
        if (wrong !== undefined) throw new CliFailure(`${which}: ${wrong}`);
        const answer = `${last.status ?? 'no answer'}${answerStatus(last) === null ? '' : ` ${answerStatus(last)}`}`;
        ctx.out.line(escapeControl(`${which} → ${answer}`));
      }
    }
  }
  ctx.out.line(ctx.out.green(`Played ${scenario.deliveries.length} deliveries; every expectation met.`));
}
