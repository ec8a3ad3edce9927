import { Command } from 'commander';
import type { CliContext } from '../cli-context';
import { UsageError } from '../cli-errors';
import type { WebhookDeliveries } from '../../emulator/emulator-state';
import { escapeControl } from '../../logger';
import { emulatorTarget } from '../emulator-target';

interface Flags {
  emulator?: string;
  json?: boolean;
}

/**
 * One line for a webhook's deliveries of an event: `acknowledged`, or `acknowledged ×2`, `failed ×1, …`.
 * Here, not in emulator/: a value imported from the emulator's modules loads its bundle, and zod with
 * it, at every start of the CLI.
 */
function deliveriesText(group: WebhookDeliveries): string {
  const states = Object.entries(group.states)
    .map(([state, n]) => (group.deliveries === 1 ? state : `${state} ×${n}`))
    .join(', ');
  return `${states} (${group.deliveries === 1 ? '' : `${group.deliveries} deliveries, `}${group.attempts} attempt${group.attempts === 1 ? '' : 's'})`;
}

export function resendCommand(ctx: CliContext): Command {
  return new Command('resend')
    .description('deliver an event again, as the Service duplicates it')
    .argument('<eventId>', 'the id `trigger` or `events` printed')
    .option('--emulator <url>', 'the emulator (default: the one `listen` or `emulator` started)')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nExample:\n  $ service-webhooks resend 3f0c1f7e-…')
    .action(async (eventId: string, flags: Flags) => {
      const result = await emulatorTarget(ctx, flags.emulator).resend(eventId);
      if (flags.json) return ctx.out.json(result);
      ctx.out.line(
        escapeControl(`Resent ${result.event.type} [${eventId}] → ${result.webhookIds.length} webhook(s)`),
      );
    });
}

export function eventsCommand(ctx: CliContext): Command {
  return new Command('events')
    .description('list recent events and their delivery state')
    .option('--limit <n>', 'how many, newest first', '20')
    .option('--emulator <url>', 'the emulator (default: the one `listen` or `emulator` started)')
    .option('--json', 'print the events as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ service-webhooks events\n  $ service-webhooks events --json --limit 5',
    )
    .action(async (flags: Flags & { limit: string }) => {
      const limit = Number(flags.limit);
      if (!Number.isSafeInteger(limit) || limit < 1)
        throw new UsageError(`--limit must be a whole number of at least 1 (got ${flags.limit})`);
      const events = (await emulatorTarget(ctx, flags.emulator).state()).events.slice(0, limit);
      if (flags.json) return ctx.out.json(events);
      if (events.length === 0) return ctx.out.line('No event yet.');
      for (const { event, webhooks, attempts } of events) {
        const states = webhooks.map((w) => `${w.webhookId}: ${deliveriesText(w)}`);
        const last = attempts.at(-1);
        ctx.out.line(
          escapeControl(
            `${event.time.slice(11, 19)}  ${event.type}  [${event.id}]  ${states.join(', ') || 'no verified webhook'}${last ? `  last answer ${last.status ?? last.error}` : ''}`,
          ),
        );
      }
    });
}
