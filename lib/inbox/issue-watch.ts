import { callContained } from '../call-contained';
import { rateLimitedLog } from '../rate-limited-log';
import type { ResolvedLogger } from '../logger';
import { OptionsError } from '../options-error';
import type { InboxWorkerOptions } from './inbox';
import type { InboxIssue, IssueAlert } from './inbox-issue';

/**
 * Where a queue's alert levels are kept, shared by all its workers: `step` reads them, lets
 * `compute` work out the next ones and stores them, as one atomic step of the engine, so each change
 * is announced by one worker only. Resolves what `compute` gave, or nothing when another worker
 * holds the step or checked within `everyMs`.
 */
export interface IssueLedger {
  step(
    everyMs: number,
    compute: (stored: IssueLevels | undefined) => Promise<{ next: IssueLevels; alerts: IssueAlert[] }>,
  ): Promise<IssueAlert[]>;
}

/** The checked `onIssue` and `issueCheckMs` of a worker's options, or undefined without `onIssue`. */
export function checkIssueAlerts(
  options: InboxWorkerOptions | undefined,
  where: string,
): { onIssue: (alert: IssueAlert) => unknown; everyMs: number } | undefined {
  if (typeof options !== 'object' || options === null) return undefined;
  const { onIssue, issueCheckMs = 15_000 } = options;
  if (onIssue !== undefined && typeof onIssue !== 'function')
    throw new OptionsError('ERR_SW_OPTION', where, 'onIssue must be a function (alert) => …');
  if (!Number.isSafeInteger(issueCheckMs) || issueCheckMs < 100)
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      `issueCheckMs must be a whole number of milliseconds ≥ 100 (got ${String(issueCheckMs)})`,
    );
  return onIssue === undefined ? undefined : { onIssue, everyMs: issueCheckMs };
}

/** How long `close()` waits for a check under way. */
const CLOSE_WAIT_MS = 5_000;

/**
 * Checks the queue's issues every `everyMs` (one worker of all of them each time, through the
 * ledger) and calls `onIssue` for each change it is the one to see. The hook is contained: not
 * awaited, so a slow or hanging one holds nothing, and what it throws is logged.
 */
export function watchIssues(options: {
  read: () => Promise<InboxIssue[]>;
  ledger: IssueLedger;
  onIssue: (alert: IssueAlert) => unknown;
  everyMs: number;
  log: ResolvedLogger;
}): { close(): Promise<void> } {
  const { read, ledger, onIssue, everyMs, log } = options;
  const warn = rateLimitedLog(log);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  async function check(): Promise<void> {
    const alerts = await ledger.step(everyMs, async (stored) =>
      advanceLevels(stored, await read(), Date.now()),
    );
    for (const alert of alerts)
      callContained(
        () => onIssue(alert),
        (error) =>
          log.error({ err: error, issue: alert.issue.key }, 'onIssue threw; the worker was not affected'),
      );
  }

  function schedule(): void {
    if (stopped) return;
    // Spread a little, so workers started together do not all ask at the same instant.
    timer = setTimeout(
      () => {
        running = check()
          .catch((error: unknown) =>
            warn('error', 'issue-check', { err: error }, 'could not check the issues; trying again'),
          )
          .finally(() => {
            running = undefined;
            schedule();
          });
      },
      everyMs * (0.9 + Math.random() * 0.2),
    );
    timer.unref();
  }
  schedule();

  return {
    async close() {
      stopped = true;
      clearTimeout(timer);
      if (running !== undefined)
        await Promise.race([running, new Promise((r) => setTimeout(r, CLOSE_WAIT_MS).unref())]);
    },
  };
}

/** What the queue's alerts last announced: each open issue's level and how it was seen then. */
export interface IssueLevels {
  /** When the last check ran (ms since the epoch): workers skip a check another ran just before. */
  checkedAt: number;
  open: Record<string, { level: number; issue: InboxIssue }>;
}

/** The power of ten a count has reached: 1, 10, 100, …; 0 for none. */
export function levelOf(count: number): number {
  return count < 1 ? 0 : 10 ** Math.floor(Math.log10(count));
}

/** An issue as JSON brings it back (its dates as strings). */
function revived(issue: InboxIssue): InboxIssue {
  return { ...issue, firstSeen: new Date(issue.firstSeen), lastSeen: new Date(issue.lastSeen) };
}

/**
 * The levels the issues read now reach, and the alerts that announces: `opened` for an issue not
 * open before, `grew` for each power of ten from 10 up that its count passed the highest it had
 * reached (a count that falls and grows back does not alert again), `resolved` for an open issue no
 * longer read. Levels only rise while an issue is open.
 */
export function advanceLevels(
  stored: IssueLevels | undefined,
  issues: readonly InboxIssue[],
  now: number,
): { next: IssueLevels; alerts: IssueAlert[] } {
  const before = stored?.open ?? {};
  const open: IssueLevels['open'] = {};
  const alerts: IssueAlert[] = [];
  for (const issue of issues) {
    const was = before[issue.key]?.level ?? 0;
    const reached = levelOf(issue.count);
    if (was === 0) alerts.push({ transition: 'opened', threshold: 1, issue });
    for (let threshold = Math.max(10, was * 10); threshold <= reached; threshold *= 10)
      alerts.push({ transition: 'grew', threshold, issue });
    open[issue.key] = { level: Math.max(was, reached), issue };
  }
  for (const [key, { issue }] of Object.entries(before))
    if (open[key] === undefined) alerts.push({ transition: 'resolved', threshold: 0, issue: revived(issue) });
  return { next: { checkedAt: now, open }, alerts };
}
