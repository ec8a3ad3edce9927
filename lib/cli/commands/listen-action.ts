import type { Emulator } from '../../emulator';
import type { EmulatorChange } from '../../emulator/emulator-types';
import { escapeControl } from '../../logger';
import { attemptLine, handshakeFailure, sendingLine } from '../attempt-lines';
import type { CliContext } from '../cli-context';
import { CliFailure, UsageError } from '../cli-errors';
import { writeState } from '../config-store';
import { EmulatorClient } from '../emulator-client';
import { selectEvents } from '../event-selection';
import { discoverEmulator, emulatorAnswers } from '../emulator-target';
import { startEmulator, type EmulatorFlags } from './emulator-command';
import { deliveryRecorder } from '../delivery-recorder';

const NAME = 'service-webhooks listen';
const RETRY_MS = 2000;

export interface ListenFlags extends EmulatorFlags {
  forwardTo?: string;
  events?: string;
  token?: string;
  layout?: 'A' | 'B';
  emulator?: string;
  printToken?: boolean;
  record?: string;
  redact?: string;
}

function checkForwardTo(url: string | undefined): string {
  if (url === undefined)
    throw new UsageError('--forward-to <url> is required, such as http://localhost:3000/webhooks');
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    throw new UsageError(
      `--forward-to must be an http(s) URL, such as http://localhost:3000/webhooks (got "${url}")`,
    );
  return url;
}

/**
 * The emulator to attach to, by the rule every command follows ({@link discoverEmulator}), then one
 * on `--port`: a running `service-webhooks emulator` is attached to, not fought. A remembered one that
 * no longer answers is forgotten (a new one starts); a `$SERVICE_WEBHOOKS_EMULATOR` that does not
 * answer is a failure, as it is for the other commands.
 */
async function runningEmulator(ctx: CliContext, flags: ListenFlags): Promise<string | undefined> {
  if (flags.emulator !== undefined) return flags.emulator.replace(/\/+$/, '');
  const found = discoverEmulator(ctx, undefined)?.replace(/\/+$/, '');
  if (found !== undefined && (await emulatorAnswers(found))) return found;
  const named = ctx.env.SERVICE_WEBHOOKS_EMULATOR;
  if (named !== undefined && named !== '')
    throw new CliFailure(
      `no emulator answers at ${named} ($SERVICE_WEBHOOKS_EMULATOR); start it with \`service-webhooks emulator\`, or unset it to let listen start one`,
    );
  const local = `http://127.0.0.1:${flags.port}`;
  return flags.port !== '0' && (await emulatorAnswers(local)) ? local : undefined;
}

/**
 * What `listen` does once its flags are parsed: attach to an emulator or start one, register a webhook
 * forwarding to the app with `token`, print each attempt until Ctrl-C or the emulator goes away.
 */
export async function listenAction(
  ctx: CliContext,
  flags: ListenFlags & { json?: boolean },
  token: string,
): Promise<void> {
  // Listened for before any line is printed: a Ctrl-C right after "verified" still cleans up.
  const interrupted = ctx.interrupted();
  const url = checkForwardTo(flags.forwardTo);
  const events = selectEvents(flags.events);
  const recorder = flags.record === undefined ? undefined : deliveryRecorder(ctx, flags.record, flags.redact);
  let own: Emulator | undefined;
  const attach = await runningEmulator(ctx, flags);
  if (attach !== undefined && attach !== flags.emulator && !flags.json)
    ctx.out.line(ctx.out.dim(`Attached to the emulator already running at ${attach}`));
  if (attach === undefined) own = await startEmulator(ctx, flags);
  const client = new EmulatorClient(attach ?? (own as Emulator).url);
  writeState({ emulatorUrl: client.url, layout: flags.layout }, ctx.env);
  const stale = (await client.state()).webhooks.filter((w) => w.name === NAME && w.url === url);
  for (const webhook of stale) await client.remove(webhook.id);

  const abort = new AbortController();
  let webhookId = '';
  const print = (change: EmulatorChange) => {
    recorder?.(change, webhookId);
    if (flags.json) return ctx.out.json(change);
    if (change.kind === 'sending' && change.webhookId === webhookId)
      ctx.out.line(sendingLine(ctx.out, change.type, change.eventId));
    if (change.kind === 'attempt' && change.attempt.webhookId === webhookId)
      ctx.out.line(attemptLine(ctx.out, change.attempt));
  };
  // Settles with the reason it ended: undefined when the stream ended, else its error.
  const following = client.follow(print, abort.signal).then(
    () => undefined,
    (error: unknown) => error,
  );
  let webhook = await client.register({ name: NAME, url, subscribedEvents: events, privateKey: token });
  webhookId = webhook.id;
  ctx.out.line(`Ready! Your delivery token is ${ctx.out.bold(token)} (^C to quit)`);
  if (!flags.json)
    ctx.out.line(ctx.out.dim(`Forwarding ${events.length} event types from ${client.url} to ${url}`));

  let lastFailure = '';
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;
  const check = async () => {
    if (stopped) return;
    if (webhook.verified)
      return ctx.out.line(ctx.out.green(escapeControl(`Webhook ${webhook.id} verified: ${url}`)));
    const failure = handshakeFailure(webhook, token);
    if (failure !== lastFailure) ctx.out.error(ctx.out.red(failure));
    lastFailure = failure;
    retry = setTimeout(() => {
      client.handshake(webhook.id).then(
        (next) => ((webhook = next), check()),
        () => undefined,
      );
    }, RETRY_MS);
  };
  await check();

  // Ctrl-C, or the emulator went away (its stream ended): either way, clean up and stop.
  const why = await Promise.race([interrupted, following.then(() => 'gone')]);
  stopped = true;
  clearTimeout(retry);
  abort.abort();
  const ended = await following;
  if (why === 'gone') {
    await own?.close();
    if (ended instanceof CliFailure) {
      // The emulator is up but refused the stream (busy): take our webhook off it again.
      await client.remove(webhookId).catch(() => undefined);
      throw ended;
    }
    throw new CliFailure(
      `the emulator at ${client.url} stopped; start it again, then \`service-webhooks listen\``,
    );
  }
  await client.remove(webhook.id).catch(() => undefined);
  await own?.close();
  if (!flags.json) ctx.out.line('Stopped listening.');
}
