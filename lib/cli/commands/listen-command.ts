import { Command, Option } from 'commander';
import type { CliContext } from '../cli-context';
import { stableToken } from '../config-store';
import { emulatorOptions } from './emulator-command';
import type { ListenFlags } from './listen-action';

export function listenCommand(ctx: CliContext): Command {
  return emulatorOptions(new Command('listen'))
    .description("register a webhook that forwards the emulator's events to your app, and print each attempt")
    .option('--forward-to <url>', "your app's webhook URL")
    .option(
      '--events <types>',
      "event types to receive: a,b or a pattern like 'ag.access_pass.*' (default: all)",
    )
    .option(
      '--token <token>',
      'the delivery token (default: one kept in your config dir, the same every run)',
    )
    .addOption(new Option('--layout <layout>', 'the layout `trigger` uses by default').choices(['A', 'B']))
    .option('--emulator <url>', 'attach to a running emulator instead of starting one')
    .option(
      '--record <file>',
      'write what arrives to a scenario file (personal fields redacted), to play with `trigger --scenario`',
    )
    .option(
      '--redact <fields>',
      "with --record: more data fields to redact, a,b (beside the spec's personal ones)",
    )
    .option('--print-token', 'print the delivery token and exit (to configure your app first)')
    .option('--json', 'print every change as a JSON line')
    .addHelpText(
      'after',
      "\nExamples:\n  $ service-webhooks listen --forward-to http://localhost:3000/webhooks\n  $ service-webhooks listen --forward-to http://localhost:3000/webhooks --events 'ag.access_pass.*' --layout B\n  $ service-webhooks listen --forward-to http://localhost:3000/webhooks --record scenarios/today.json\n  $ export SERVICE_WEBHOOK_TOKEN=$(service-webhooks listen --print-token)",
    )
    .action(async (flags: ListenFlags & { json?: boolean }) => {
      const token = flags.token ?? stableToken(ctx.env);
      if (flags.printToken) return ctx.out.line(token);
      // Loaded when `listen` runs, not at every start of the CLI (tsup.config.ts: why an entry).
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when `listen` runs
      const { listenAction } = require('./listen-action') as typeof import('./listen-action');
      return listenAction(ctx, flags, token);
    });
}
