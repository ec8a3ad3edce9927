import { Command, Option } from 'commander';
import { EVENT_TYPES } from '../../events/catalogue';
import { escapeControl } from '../../logger';
import type { CliContext } from '../cli-context';
import { UsageError } from '../cli-errors';
import { readState } from '../config-store';
import { emulatorTarget } from '../emulator-target';
import { eventType } from '../event-selection';
import { checkTriggerData } from '../check-trigger-data';
import { parseSets } from '../set-fields';

interface TriggerFlags {
  layout?: 'A' | 'B';
  set: string[];
  duplicate: string;
  emulator?: string;
  json?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function triggerCommand(ctx: CliContext): Command {
  return new Command('trigger')
    .description('emit an event through the running emulator')
    .argument('<type>', 'an event type of the catalogue')
    .addOption(new Option('--layout <layout>', 'A (current) or B (earlier flat layout)').choices(['A', 'B']))
    .option('--set <path=value>', "override a field, in the test kit's names (repeatable)", collect, [])
    .option('--duplicate <n>', "deliver the same event n more times, as the Service's duplicates", '0')
    .option('--emulator <url>', 'the emulator (default: the one `listen` or `emulator` started)')
    .option('--json', 'print the event as JSON')
    .addHelpText(
      'after',
      `\nExamples:\n  $ service-webhooks trigger ag.access_pass.issued\n  $ service-webhooks trigger ag.access_pass.issued --set data.full_name=Ada --set data.metadata.team=red\n  $ service-webhooks trigger ag.card_template.published --layout B --duplicate 1\n\nEvent types:\n  ${EVENT_TYPES.join('\n  ')}`,
    )
    .action(async (typeText: string, flags: TriggerFlags) => {
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
    });
}
