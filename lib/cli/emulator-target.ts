import { readState } from './config-store';
import { CliFailure } from './cli-errors';
import type { CliContext } from './cli-context';
import { EmulatorClient } from './emulator-client';

/** The emulator a command talks to: `--emulator`, else the one `listen` or `emulator` last started. */
export function emulatorTarget(ctx: CliContext, flag: string | undefined): EmulatorClient {
  const url = flag ?? ctx.env.SERVICE_WEBHOOKS_EMULATOR ?? readState(ctx.env).emulatorUrl;
  if (url === undefined) {
    throw new CliFailure(
      'no emulator known; start one with `service-webhooks listen --forward-to <url>` (or `service-webhooks emulator`), or pass --emulator <url>',
    );
  }
  return new EmulatorClient(url.replace(/\/+$/, ''));
}
