import { Command } from 'commander';
import type { ConsoleClient } from '../../console';
import { escapeControl } from '../../logger';
import type { CliContext } from '../cli-context';
import { UsageError } from '../cli-errors';
import { EmulatorClient } from '../emulator-client';
import { discoverEmulator } from '../emulator-target';
import type { EventType } from '../../events/catalogue';

interface Credentials {
  baseUrl?: string;
  accountId?: string;
  secretKey?: string;
  emulator?: string;
  json?: boolean;
}

/**
 * A console client: the Service when its credentials are given (flags, else `SERVICE_*` variables),
 * else the emulator found as every command finds it (`--emulator`, `$SERVICE_WEBHOOKS_EMULATOR`, the
 * one last started), with its own account.
 */
async function consoleClient(ctx: CliContext, flags: Credentials): Promise<ConsoleClient> {
  // The console client's bundle is loaded only by these commands, not at every start of the CLI.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for `webhooks`
  const { ConsoleClient } = require('../../console/index') as typeof import('../../console/index');
  const baseUrl = flags.baseUrl ?? ctx.env.SERVICE_BASE_URL;
  const accountId = flags.accountId ?? ctx.env.SERVICE_ACCOUNT_ID;
  const secretKey = flags.secretKey ?? ctx.env.SERVICE_SECRET_KEY;
  const emulatorUrl =
    flags.emulator !== undefined || !baseUrl ? discoverEmulator(ctx, flags.emulator) : undefined;
  if (emulatorUrl !== undefined) {
    const emulator = new EmulatorClient(emulatorUrl.replace(/\/+$/, ''));
    return new ConsoleClient({ baseUrl: emulator.url, ...(await emulator.account()) });
  }
  const missing = [
    baseUrl ? '' : 'SERVICE_BASE_URL (--base-url)',
    accountId ? '' : 'SERVICE_ACCOUNT_ID (--account-id)',
    secretKey ? '' : 'SERVICE_SECRET_KEY (--secret-key)',
  ].filter(Boolean);
  if (missing.length > 0)
    throw new UsageError(
      `set ${missing.join(', ')}, or start the emulator (\`service-webhooks emulator\`) or pass --emulator <url> to use it`,
    );
  return new ConsoleClient({
    baseUrl: baseUrl as string,
    accountId: accountId as string,
    secretKey: secretKey as string,
  });
}

/** `--events`, checked against the catalogue: loaded by `webhooks create` only (tsup.config.ts: why an entry). */
function subscribedEvents(list: string | undefined): EventType[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only by `webhooks create`
  const { selectEvents } = require('../event-selection') as typeof import('../event-selection');
  return selectEvents(list);
}

const withCredentials = (command: Command): Command =>
  command
    .option('--base-url <url>', 'the Service (default: $SERVICE_BASE_URL)')
    .option('--account-id <id>', 'default: $SERVICE_ACCOUNT_ID')
    .option('--secret-key <key>', 'default: $SERVICE_SECRET_KEY (prefer the variable: flags show in ps)')
    .option('--emulator <url>', 'use the emulator at this URL and its account')
    .option('--json', 'print JSON');

export function webhooksCommand(ctx: CliContext): Command {
  const webhooks = new Command('webhooks')
    .description('list, create, delete and verify webhooks through the console API')
    .addHelpText(
      'after',
      "\nExamples:\n  $ service-webhooks webhooks list --emulator http://127.0.0.1:4010 --json\n  $ service-webhooks webhooks create --name orders --url https://example.com/webhooks --events 'ag.access_pass.*'\n  $ SERVICE_BASE_URL=https://… SERVICE_ACCOUNT_ID=… SERVICE_SECRET_KEY=… service-webhooks webhooks list",
    );
  webhooks.addCommand(
    withCredentials(new Command('list').description('list every webhook of the account')).action(
      async (flags: Credentials) => {
        const all = [];
        for await (const webhook of (await consoleClient(ctx, flags)).iterateWebhooks()) all.push(webhook);
        if (flags.json) return ctx.out.json(all);
        if (all.length === 0) return ctx.out.line('No webhook.');
        for (const w of all)
          ctx.out.line(
            `${escapeControl(w.id)}  ${w.verified ? ctx.out.green('verified  ') : ctx.out.red('unverified')}  ${escapeControl(`${w.name}  ${w.url ?? ''}`)}`,
          );
      },
    ),
  );
  webhooks.addCommand(
    withCredentials(new Command('create').description('create a webhook; prints its token once'))
      .requiredOption('--name <name>', 'its name')
      .requiredOption('--url <url>', 'where deliveries go (https; http only to localhost)')
      .option('--events <types>', "a,b or a pattern like 'ag.access_pass.*' (default: all)")
      .action(async (flags: Credentials & { name: string; url: string; events?: string }) => {
        const client = await consoleClient(ctx, flags);
        const created = await client.createWebhook({
          name: flags.name,
          url: flags.url,
          subscribedEvents: subscribedEvents(flags.events),
        });
        if (flags.json) return ctx.out.json(created);
        ctx.out.line(
          escapeControl(
            `Created ${created.id} (${created.verified ? 'verified' : 'handshake sent'}). Its delivery token, shown only now:`,
          ),
        );
        ctx.out.line(escapeControl(created.privateKey));
      }),
  );
  for (const [name, description] of [
    ['delete', 'delete a webhook'],
    ['verify', 'send the handshake again (202), or confirm it is verified (200)'],
  ] as const) {
    webhooks.addCommand(
      withCredentials(new Command(name).description(description).argument('<id>', 'the webhook id')).action(
        async (id: string, flags: Credentials) => {
          const client = await consoleClient(ctx, flags);
          const result =
            name === 'delete'
              ? (await client.deleteWebhook(id), { id, deleted: true })
              : await client.verifyWebhook(id);
          if (flags.json) return ctx.out.json(result);
          ctx.out.line(
            escapeControl(
              name === 'delete'
                ? `Deleted ${id}`
                : `${id}: ${'verified' in result && result.verified ? 'verified' : 'handshake sent again'}`,
            ),
          );
        },
      ),
    );
  }
  return webhooks;
}
