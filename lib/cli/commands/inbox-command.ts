import { Command } from 'commander';
import { MAX_DEAD_LETTERS, MAX_ISSUES } from '../../inbox/check-dead-letter-query';
import { issueLines } from '../issue-lines';
import type { DeadLetter, Inbox, ReplayFilter } from '../../inbox/inbox';
import { escapeControl } from '../../logger';
import type { CliContext } from '../cli-context';
import { Stopped, UsageError } from '../cli-errors';
import { parseDuration } from '../parse-duration';
import { boundedInboxWork } from '../bounded-inbox-work';
import { cursorFlags } from '../cursor-flags';

interface QueueFlags {
  url?: string;
  name?: string;
  json?: boolean;
  timeout?: string;
}

/** How long a command waits for the queue's server, connecting included, before it gives up. */
const DEFAULT_TIMEOUT = '10s';
/** A day: well inside a timer's 2^31 - 1 ms, past which Node fires it at once. */
const LONGEST_TIMEOUT = '24h';

/** `inbox status` counts the issues while there are at most this many dead letters. */
const STATUS_ISSUES_UP_TO = 10_000;

const seconds = (ms: number | null) => (ms === null ? 'none' : `${Math.round(ms / 1000)} s`);

/** Opens the inbox the flags name (`read`: only to read it) and runs `work` on it, bounded by `--timeout`. */
function withInbox<T>(
  ctx: CliContext,
  flags: QueueFlags,
  access: 'read' | 'write',
  work: (inbox: Inbox, heard: () => void) => Promise<T>,
): Promise<T> {
  const timeoutMs = parseDuration('--timeout', flags.timeout ?? DEFAULT_TIMEOUT, LONGEST_TIMEOUT);
  if (timeoutMs < 1) throw new UsageError('--timeout must be longer than 0 (such as 10s)');
  const url = flags.url ?? ctx.env.SERVICE_WEBHOOKS_INBOX_URL;
  return boundedInboxWork(url, flags.name, timeoutMs, work, access);
}

/**
 * Each handler's state, by name, as `audit failed (13 tries), crm ok (1 try)`: only for an event of
 * several handlers (one handler's state is the dead letter's own).
 */
function handlerStates(d: DeadLetter): string {
  const names = Object.keys(d.handlers ?? {}).sort();
  if (d.handlers === undefined || names.length < 2) return '';
  const states = names.map((name) => {
    const s = d.handlers![name]!;
    return `${name} ${s.ok ? 'ok' : 'failed'} (${s.attempts} ${s.attempts === 1 ? 'try' : 'tries'})`;
  });
  return `  handlers: ${states.join(', ')}`;
}

/**
 * The id, type, error and handler names are the sender's, a handler's and the router's bytes:
 * escaped, they cannot forge a line.
 */
function deadLetterLine(d: DeadLetter): string {
  const failed = d.failedAt === null ? '?' : d.failedAt.toISOString();
  return escapeControl(
    `${d.delivery.id}  ${d.delivery.type}  ${d.attempts} attempts  failed ${failed}  ${d.lastError ?? ''}${handlerStates(d)}`,
  );
}

/** Commander's way to take a flag more than once. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

const queueOptions = (command: Command) =>
  command
    .option(
      '--url <url>',
      'the queue: redis://… (BullMQ) or postgres://… (pg-boss) (default: $SERVICE_WEBHOOKS_INBOX_URL)',
    )
    .option('--name <name>', "the queue's name (default: service-webhooks)")
    .option('--json', 'print JSON')
    .option(
      '--timeout <duration>',
      `give up when the queue's server has not answered within this long (default: ${DEFAULT_TIMEOUT})`,
    );

export function inboxCommand(ctx: CliContext): Command {
  const inbox = new Command('inbox').description(
    'look into a durable inbox: its depth, its dead letters and their issues, and replay them; pause and resume it',
  );
  inbox.addCommand(
    queueOptions(
      new Command('status').description(
        'jobs waiting, delayed (backoff) and running, dead letters, the oldest jobs’ ages',
      ),
    ).action((flags: QueueFlags) =>
      withInbox(ctx, flags, 'read', async (i) => {
        const status = await i.status();
        // Counting issues reads every dead letter: past a bound, status stays quick and says so.
        const issues =
          status.dead <= STATUS_ISSUES_UP_TO ? (await i.issues({ limit: MAX_ISSUES })).length : null;
        if (flags.json) return ctx.out.json({ engine: i.engine, ...status, issues });
        const counted =
          issues === null
            ? 'issues not counted past ' + STATUS_ISSUES_UP_TO + ': see inbox issues'
            : `${issues} open issue${issues === 1 ? '' : 's'}`;
        ctx.out.line(
          `${i.engine}${status.paused ? ' (paused: no worker starts a try; inbox resume to go on)' : ''}: ${status.waiting} waiting, ${status.delayed} delayed, ${status.active} running, ${status.dead} dead letters (${counted}), oldest waiting ${seconds(status.oldestAgeMs)}, oldest delayed ${seconds(status.oldestDelayedAgeMs)}`,
        );
      }),
    ),
  );
  inbox.addCommand(
    queueOptions(new Command('dead-letters').description('the events whose tries ran out, newest first'))
      .option('--type <type>', 'only events of this type')
      .option('--handler <name>', 'only those on which this handler (by name) failed')
      .option('--limit <n>', 'at most this many (default: 100)')
      .option('--after <cursor>', 'the page after this dead letter (older ones), as a full page ends with')
      .option('--before <cursor>', 'the page before this dead letter (newer ones), still newest first')
      .action(
        (
          flags: QueueFlags & {
            type?: string;
            handler?: string;
            limit?: string;
            after?: string;
            before?: string;
          },
        ) => {
          const limit = flags.limit === undefined ? 100 : Number(flags.limit);
          if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_DEAD_LETTERS)
            throw new UsageError(`--limit must be a whole number from 1 to ${MAX_DEAD_LETTERS}`);
          const page = cursorFlags(flags);
          return withInbox(ctx, flags, 'read', async (i) => {
            const dead = await i.deadLetters({
              limit,
              ...page,
              ...(flags.type === undefined ? {} : { type: flags.type }),
              ...(flags.handler === undefined ? {} : { handler: flags.handler }),
            });
            if (flags.json) return ctx.out.json(dead);
            if (dead.length === 0) return ctx.out.line('no dead letters');
            for (const d of dead) ctx.out.line(deadLetterLine(d));
            // A full page may have more beyond it: say how to read them (on stderr, so the lines
            // on stdout stay one dead letter each).
            if (dead.length < limit) return;
            const next =
              page.before === undefined
                ? { flag: '--after', cursor: dead.at(-1)?.cursor, what: 'the next, older' }
                : { flag: '--before', cursor: dead[0]?.cursor, what: 'the newer' };
            if (next.cursor !== undefined)
              ctx.out.error(
                ctx.out.dim(`a full page of ${limit}: ${next.flag} ${next.cursor} for ${next.what} ones`),
              );
          });
        },
      ),
  );
  inbox.addCommand(
    queueOptions(
      new Command('issues').description(
        'the dead letters grouped by type, handler and error, the most recent first',
      ),
    )
      .option('--limit <n>', `at most this many (default: 100, at most ${MAX_ISSUES})`)
      .action((flags: QueueFlags & { limit?: string }) => {
        const limit = flags.limit === undefined ? 100 : Number(flags.limit);
        if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_ISSUES)
          throw new UsageError(`--limit must be a whole number from 1 to ${MAX_ISSUES}`);
        return withInbox(ctx, flags, 'read', async (i) => {
          const issues = await i.issues({ limit });
          if (flags.json) return ctx.out.json(issues);
          if (issues.length === 0) return ctx.out.line('no open issues');
          for (const line of issueLines(issues)) ctx.out.line(line);
        });
      }),
  );
  inbox.addCommand(
    queueOptions(
      new Command('replay').description(
        'put dead letters back in the queue: one event, or by type, age and issue',
      ),
    )
      .argument('[eventId]', 'the event to replay')
      .option('--type <type>', 'replay the dead letters of this type')
      .option('--since <duration>', 'replay those that failed within this long (90s, 30m, 6h)')
      .option('--issue <key>', 'replay the dead letters of this issue (its key, from inbox issues)')
      .option('--all', 'replay every dead letter')
      .option(
        '--handler <name>',
        'with an event id: run only this handler (repeat the flag for more), even one that succeeded',
        collect,
      )
      .option('--dry-run', 'count what would be replayed, and put nothing back')
      .action(
        (
          eventId: string | undefined,
          flags: QueueFlags & {
            type?: string;
            since?: string;
            issue?: string;
            all?: boolean;
            handler?: string[];
            dryRun?: boolean;
          },
        ) => {
          const filtered = flags.type !== undefined || flags.since !== undefined || flags.issue !== undefined;
          if ((eventId !== undefined) === (filtered || flags.all === true))
            throw new UsageError('give an event id, or --type / --since / --issue, or --all');
          if (flags.handler !== undefined && eventId === undefined)
            throw new UsageError(
              '--handler replays one event: give its id (inbox replay evt_123 --handler crm)',
            );
          const target: string | ReplayFilter = eventId ?? {
            ...(flags.type === undefined ? {} : { type: flags.type }),
            ...(flags.issue === undefined ? {} : { issue: flags.issue }),
            ...(flags.since === undefined
              ? {}
              : { since: new Date(Date.now() - parseDuration('--since', flags.since)) }),
          };
          const handlers = flags.handler;
          if (handlers === undefined)
            return withInbox(ctx, flags, 'write', (i, heard) => replayCommand(ctx, i, target, flags, heard));
          if (flags.dryRun === true)
            throw new UsageError(
              '--dry-run counts the dead letters a filter matches; it does not go with --handler',
            );
          return withInbox(ctx, flags, 'write', async (i) => {
            const replayed = await i.replay(target, { handlers });
            if (flags.json) return ctx.out.json({ replayed });
            ctx.out.line(`replayed ${letters(replayed)}`);
          });
        },
      ),
  );
  for (const [verb, what] of [
    ['pause', 'stop every worker of the queue from starting tries; receivers go on queueing events'],
    ['resume', 'let the workers of a paused queue start tries again'],
  ] as const)
    inbox.addCommand(
      queueOptions(new Command(verb).description(what)).action((flags: QueueFlags) =>
        withInbox(ctx, flags, 'write', async (i) => {
          await i[verb]();
          if (flags.json) return ctx.out.json({ paused: verb === 'pause' });
          ctx.out.line(verb === 'pause' ? `paused ${i.name}` : `resumed ${i.name}`);
        }),
      ),
    );
  return inbox;
}

const count = (n: number) => n.toLocaleString('en-US');
const letters = (n: number) => `${count(n)} dead letter${n === 1 ? '' : 's'}`;
const BAR = 24;

/** `[#####-------]  42%  replayed 1,200 of 5,000` on a terminal; the same words alone otherwise. */
function progressText(replayed: number, total: number): string {
  const words = `replayed ${count(replayed)} of ${count(total)}`;
  const done = total === 0 ? 1 : Math.min(1, replayed / total);
  const filled = Math.round(done * BAR);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR - filled)}] ${String(Math.floor(done * 100)).padStart(3)}%  ${words}`;
}

/**
 * Counts the dead letters `target` names (a dry run's answer, and the total the progress is shown
 * against), then replays them a page at a time; Ctrl-C stops between pages, says how far it came and
 * exits 130, what was put back staying put back.
 */
async function replayCommand(
  ctx: CliContext,
  inbox: Inbox,
  target: string | ReplayFilter,
  flags: QueueFlags & { dryRun?: boolean },
  heard: () => void,
): Promise<void> {
  const stop = new AbortController();
  void ctx.interrupted().then(() => {
    stop.abort();
    ctx.out.endProgress();
    ctx.out.error('stopping once the page under way is put back (a dead letter is never half replayed)');
  });
  const total = await inbox.replay(target, { dryRun: true, signal: stop.signal, onProgress: heard });
  if (flags.dryRun === true) {
    if (flags.json) return ctx.out.json({ wouldReplay: total });
    return ctx.out.line(`would replay ${letters(total)}; nothing was put back (--dry-run)`);
  }
  const shown = flags.json !== true && total > 0;
  let last = 0;
  const replayed = stop.signal.aborted
    ? 0
    : await inbox.replay(target, {
        signal: stop.signal,
        onProgress: ({ replayed: sofar }) => {
          heard();
          // A page that put nothing back (another replay took it, or none matched) changes nothing shown.
          if (shown && sofar !== last) ctx.out.progress(progressText(sofar, Math.max(total, sofar)));
          last = sofar;
        },
      });
  if (shown) ctx.out.endProgress();
  if (stop.signal.aborted) {
    if (flags.json) ctx.out.json({ replayed, of: total, stopped: true });
    else ctx.out.line(`replayed ${count(replayed)} of ${count(total)}; stopped`);
    throw new Stopped();
  }
  if (flags.json) return ctx.out.json({ replayed });
  ctx.out.line(`replayed ${letters(replayed)}`);
}
