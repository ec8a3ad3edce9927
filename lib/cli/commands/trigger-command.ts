import { Command, Option } from 'commander';
import { EVENT_TYPES } from '../../events/catalogue';
import type { CliContext } from '../cli-context';
import type { TriggerFlags } from './trigger-action';

const collect = (value: string, previous: string[]) => [...previous, value];

export function triggerCommand(ctx: CliContext): Command {
  return new Command('trigger')
    .description('emit an event through the running emulator')
    .argument('[type]', 'an event type of the catalogue (or --scenario)')
    .addOption(new Option('--layout <layout>', 'A (current) or B (earlier flat layout)').choices(['A', 'B']))
    .option('--set <path=value>', "override a field, in the test kit's names (repeatable)", collect, [])
    .option('--duplicate <n>', "deliver the same event n more times, as the Service's duplicates", '0')
    .option('--emulator <url>', 'the emulator (default: the one `listen` or `emulator` started)')
    .option('--json', 'print the event as JSON')
    .option('--scenario <file>', 'play a scenario file (see `listen --record`) instead of one event')
    .addOption(
      new Option('--timing <timing>', "with --scenario: 'original' waits each delivery's delayMs")
        .choices(['fast', 'original'])
        .default('fast'),
    )
    .option('--timeout <duration>', 'with --scenario: how long one delivery may be retried', '60s')
    .addHelpText(
      'after',
      `\nExamples:\n  $ service-webhooks trigger ag.access_pass.issued\n  $ service-webhooks trigger ag.access_pass.issued --set data.full_name=Ada --set data.metadata.team=red\n  $ service-webhooks trigger ag.card_template.published --layout B --duplicate 1\n  $ service-webhooks trigger --scenario scenarios/today.json --timing original\n\nEvent types:\n  ${EVENT_TYPES.join('\n  ')}`,
    )
    .action(async (typeText: string | undefined, flags: TriggerFlags) => {
      // Loaded when `trigger` runs, not at every start of the CLI (tsup.config.ts: why an entry).
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when `trigger` runs
      const { triggerAction } = require('./trigger-action') as typeof import('./trigger-action');
      return triggerAction(ctx, typeText, flags);
    });
}
