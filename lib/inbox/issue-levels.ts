import type { InboxIssue, IssueAlert } from './inbox-issue';

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
