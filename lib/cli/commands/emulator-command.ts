import { Command, Option } from 'commander';
import type { Emulator } from '../../emulator';
import type { CliContext } from '../cli-context';
import { CliFailure } from '../cli-errors';
import { writeState } from '../config-store';
import { parseDuration } from '../parse-duration';

export interface EmulatorFlags {
  port: string;
  retryWindow: string;
  fastRetries?: boolean;
  json?: boolean;
}

/** Starts an emulator for a command; a busy port is a one-line failure that says what to do. */
export async function startEmulator(ctx: CliContext, flags: EmulatorFlags): Promise<Emulator> {
  const port = Number(flags.port);
  const fast = flags.fastRetries === true;
  // The emulator's bundle (and zod, which its console API validates with) is loaded only by the
  // commands that start one: every other command, `--help` included, starts without it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only to start an emulator
  const { createEmulator } = require('../../emulator/index') as typeof import('../../emulator/index');
  try {
    const emulator = await createEmulator({
      port,
      retryWindowMs: parseDuration('--retry-window', flags.retryWindow),
      initialBackoffMs: fast ? 200 : 1000,
      maxBackoffMs: fast ? 2000 : 15 * 60 * 1000,
      logger: { warn: (_meta: unknown, message: string) => ctx.out.error(ctx.out.dim(message)) },
    });
    writeState({ emulatorUrl: emulator.url }, ctx.env);
    return emulator;
  } catch (error) {
    if ((error as { code?: string }).code === 'EADDRINUSE') {
      throw new CliFailure(
        `port ${port} is in use; is an emulator already running? Attach to it with --emulator http://127.0.0.1:${port}, or choose another --port`,
      );
    }
    throw error;
  }
}

export const emulatorOptions = (command: Command): Command =>
  command
    .addOption(new Option('--port <port>', 'port on 127.0.0.1 (0 for any free port)').default('4010'))
    .addOption(
      new Option('--retry-window <duration>', 'how long failing deliveries are retried').default('6h'),
    )
    .option('--fast-retries', 'retry after 200 ms, doubling up to 2 s, instead of 1 s up to 15 min');

export function emulatorCommand(ctx: CliContext): Command {
  return emulatorOptions(new Command('emulator'))
    .description('run the emulator of the Service in the foreground: console API, deliveries, web console')
    .option('--json', 'print the addresses and credentials as one JSON line')
    .addHelpText(
      'after',
      '\nExamples:\n  $ service-webhooks emulator\n  $ service-webhooks emulator --port 4011 --retry-window 10m --fast-retries',
    )
    .action(async (flags: EmulatorFlags) => {
      // Listened for before any line is printed: a Ctrl-C right after them still stops cleanly.
      const interrupted = ctx.interrupted();
      const emulator = await startEmulator(ctx, flags);
      const { accountId, secretKey } = emulator.account;
      const consoleUrl = `${emulator.url}/`;
      if (flags.json) ctx.out.json({ url: emulator.url, accountId, secretKey, consoleUrl });
      else {
        ctx.out.line(ctx.out.bold('Emulator running.'));
        ctx.out.line(`  Console API (baseUrl):  ${emulator.url}`);
        ctx.out.line(`  Account id:             ${accountId}`);
        ctx.out.line(`  Secret key:             ${secretKey}`);
        ctx.out.line(`  Web console:            ${consoleUrl}`);
        ctx.out.line(ctx.out.dim('(^C to stop)'));
      }
      await interrupted;
      await emulator.close();
      if (!flags.json) ctx.out.line('Emulator stopped.');
    });
}
