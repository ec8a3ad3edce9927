import { readState } from './config-store';
import { CliFailure } from './cli-errors';
import type { CliContext } from './cli-context';
import { EmulatorClient } from './emulator-client';

/**
 * The one discovery rule every command follows: `--emulator`, else `$SERVICE_WEBHOOKS_EMULATOR`, else
 * the emulator `listen` or `emulator` last started; undefined when none is known.
 */
export function discoverEmulator(ctx: CliContext, flag: string | undefined): string | undefined {
  return flag ?? ctx.env.SERVICE_WEBHOOKS_EMULATOR ?? readState(ctx.env).emulatorUrl;
}

/** Whether an emulator answers at `url`, asked briefly (a port in use may be anything else). */
export async function emulatorAnswers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/_emulator/account`, { signal: AbortSignal.timeout(1_000) });
    const body = (await res.json()) as { accountId?: unknown };
    return res.ok && typeof body.accountId === 'string';
  } catch {
    return false;
  }
}

/** The emulator a command talks to, by {@link discoverEmulator}; a one-line failure when none is known. */
export function emulatorTarget(ctx: CliContext, flag: string | undefined): EmulatorClient {
  const url = discoverEmulator(ctx, flag);
  if (url === undefined) {
    throw new CliFailure(
      'no emulator known; start one with `service-webhooks listen --forward-to <url>` (or `service-webhooks emulator`), or pass --emulator <url>',
    );
  }
  return new EmulatorClient(url.replace(/\/+$/, ''));
}
