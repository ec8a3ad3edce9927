import { Command, CommanderError } from 'commander';
import { escapeControl } from '../logger';
import { processContext, type CliContext } from './cli-context';
import { emulatorCommand } from './commands/emulator-command';
import { eventsCommand, resendCommand } from './commands/events-command';
import { inboxCommand } from './commands/inbox-command';
import { listenCommand } from './commands/listen-command';
import { signCommand } from './commands/sign-command';
import { triggerCommand } from './commands/trigger-command';
import { webhooksCommand } from './commands/webhooks-command';
import { Stopped } from './cli-errors';
import { createOutput } from './output';

/** Exit codes: 0 ok, 1 the command failed, 2 it was called wrong. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** The package's version, from its package.json (bundled into the CLI at build). */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a JSON file outside lib/'s rootDir
const { version: VERSION } = require('../../package.json') as { version: string };

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('service-webhooks')
    .version(VERSION, '-V, --version', 'print the version of service-webhooks')
    .description(
      "The local loop for the Service's webhooks: an emulator, listen, trigger, and the console API.",
    )
    .addHelpText(
      'after',
      '\nThe local loop, in three terminals:\n  $ node app.js                     # your app, its token from `service-webhooks listen --print-token`\n  $ service-webhooks listen --forward-to http://localhost:3000/webhooks\n  $ service-webhooks trigger ag.access_pass.issued --set data.full_name=Ada\n\nExit codes: 0 ok, 1 failure, 2 usage. Colours only on a terminal; NO_COLOR turns them off.',
    );
  for (const command of [
    emulatorCommand(ctx),
    listenCommand(ctx),
    triggerCommand(ctx),
    resendCommand(ctx),
    eventsCommand(ctx),
    webhooksCommand(ctx),
    signCommand(ctx),
    inboxCommand(ctx),
  ])
    program.addCommand(command);
  const configure = (command: Command) => {
    command
      .exitOverride()
      .showHelpAfterError(
        `(run \`${command.name() === program.name() ? 'service-webhooks' : `service-webhooks ${command.name()}`} --help\` for usage)`,
      )
      .configureOutput({
        writeOut: (s) => ctx.out.line(s.trimEnd()),
        writeErr: (s) => ctx.out.error(s.trimEnd()),
      });
    command.commands.forEach(configure);
  };
  configure(program);
  return program;
}

/** Runs one command line; resolves to its exit code, never throws. */
export async function runCli(argv: readonly string[], ctx: CliContext): Promise<number> {
  const program = buildProgram(ctx);
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return EXIT.usage;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      const quiet = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code);
      return quiet ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof Stopped) return error.exitCode;
    const exitCode = (error as { exitCode?: number }).exitCode === EXIT.usage ? EXIT.usage : EXIT.failure;
    // A failure can quote the Service or the emulator (a problem's detail): escaped, as any line they send.
    const message = escapeControl(
      ((error as Error)?.message ?? String(error)).replace(/^\[service-webhooks\] /, ''),
    );
    ctx.out.error(ctx.out.red(`error: ${message}`));
    return exitCode;
  }
}

/** The bin's entry: the real process, its streams and its signals. */
export async function main(): Promise<void> {
  const out = createOutput({ stdout: process.stdout, stderr: process.stderr, env: process.env });
  process.exitCode = await runCli(process.argv.slice(2), processContext(out));
}
