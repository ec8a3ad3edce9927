import { Command } from 'commander';
import { signPayload } from '../../console/sign-payload';
import type { CliContext } from '../cli-context';
import { UsageError } from '../cli-errors';

export function signCommand(ctx: CliContext): Command {
  return new Command('sign')
    .description('print the console request signature of spec 5.1 (X-PAYLOAD-SIG) for a payload')
    .argument('<payload>', "the exact JSON text: the POST body, or sig_payload ('{}') for GET and DELETE")
    .option('--secret-key <key>', 'the account secret (default: $SERVICE_SECRET_KEY)')
    .option('--json', 'print { payload, signature }')
    .addHelpText(
      'after',
      '\nExamples:\n  $ service-webhooks sign \'{}\'              # GET and DELETE, with SERVICE_SECRET_KEY set\n  $ service-webhooks sign \x27{"name":"orders"}\x27  # a POST body, exactly as sent',
    )
    .action((payload: string, flags: { secretKey?: string; json?: boolean }) => {
      const secretKey = flags.secretKey ?? ctx.env.SERVICE_SECRET_KEY;
      if (!secretKey) throw new UsageError('set SERVICE_SECRET_KEY, or pass --secret-key');
      const signature = signPayload(payload, secretKey);
      if (flags.json) ctx.out.json({ payload, signature });
      else ctx.out.line(signature);
    });
}
