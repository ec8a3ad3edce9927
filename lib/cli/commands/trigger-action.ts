import { loadScenario } from '../../events/load-scenario';
import { escapeControl } from '../../logger';
import type { CliContext } from '../cli-context';
import { UsageError } from '../cli-errors';
import { readState } from '../config-store';
import { emulatorTarget } from '../emulator-target';
import { eventType } from '../event-selection';
import { checkTriggerData } from '../check-trigger-data';
import { parseSets } from '../set-fields';
import { parseDuration } from '../parse-duration';
import { playThroughEmulator } from '../play-through-emulator';

/** A broken file is a usage error (exit 2), its message naming the path inside it. */
function loadScenarioFile(file: string) {
  try {
    return loadScenario(file, '--scenario');
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/^\[service-webhooks\] /, ''));
  }
}

export interface TriggerFlags {
  layout?: 'A' | 'B';
  set: string[];
  duplicate: string;
  emulator?: string;
  json?: boolean;
  scenario?: string;
  timing: 'fast' | 'original';
  timeout: string;
}

/**
 * What `trigger` does once its flags are parsed: check the event against the catalogue and emit it
 * through the emulator (with its duplicates), or play a scenario file.
 */
export async function triggerAction(
  ctx: CliContext,
  typeText: string | undefined,
  flags: TriggerFlags,
): Promise<void> {
  if (flags.scenario !== undefined) {
    if (typeText !== undefined) throw new UsageError('give an event type or --scenario <file>, not both');
    const timeoutMs = parseDuration('--timeout', flags.timeout, '7h');
    const scenario = loadScenarioFile(flags.scenario);
    return playThroughEmulator(ctx, emulatorTarget(ctx, flags.emulator), scenario, {
      timing: flags.timing,
      timeoutMs,
    });
  }
  if (typeText === undefined)
    throw new UsageError("missing required argument 'type' (an event type), or --scenario <file>");
  const type = eventType(typeText);
  const duplicates = Number(flags.duplicate);
  if (!Number.isSafeInteger(duplicates) || duplicates < 0 || duplicates > 100)
    throw new UsageError(`--duplicate must be a whole number from 0 to 100 (got "${flags.duplicate}")`);
  const layout = flags.layout ?? readState(ctx.env).layout ?? 'A';
  const { data, id } = parseSets(type, layout, flags.set);
  checkTriggerData(type, layout, data);
  const client = emulatorTarget(ctx, flags.emulator);
  const triggered = await client.trigger({ type, layout, data, ...(id === undefined ? {} : { id }) });
  for (let i = 0; i < duplicates; i++) await client.resend(triggered.event.id);
  if (flags.json) return ctx.out.json(triggered);
  const to = triggered.webhookIds.length;
  ctx.out.line(
    escapeControl(
      `Triggered ${type} [${triggered.event.id}] in layout ${layout} → ${to} webhook${to === 1 ? '' : 's'}${duplicates ? `, sent ${duplicates} more time${duplicates === 1 ? '' : 's'}` : ''}`,
    ),
  );
  if (to === 0)
    ctx.out.error(
      ctx.out.red(
        'No verified webhook receives it; is `service-webhooks listen` running and its handshake verified?',
      ),
    );
}
