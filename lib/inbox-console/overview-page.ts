import type { DeadLetter } from '../inbox/inbox';
import type { BulkReplayState } from './bulk-replay';
import { age, text, when } from './console-text';
import { deadLetterTable } from './dead-letter-rows';
import { quarantinedOf, type ConsoleIssue } from './newer-fields';
import { page, type PageFrame } from './page-layout';
import { replayProgressSection } from './replay-progress';
import { triesChart } from './tries-chart';
import type { MinuteTries } from './tries-per-minute';

/** What the overview shows beyond every page's frame. */
export interface OverviewData {
  hour: readonly MinuteTries[];
  /** Whether a worker has reported tries to this console (`onJob` wired). */
  triesWired: boolean;
  newest: readonly DeadLetter[];
  /** The grouped dead letters, when the inbox has `issues()`. */
  issues: readonly ConsoleIssue[] | undefined;
  /** The running bulk replay, or the last one's end. */
  bulk: BulkReplayState | undefined;
}

function number(field: string, label: string, value: string): string {
  return `<div><dt>${label}</dt><dd data-field="${field}" data-testid="${field}">${value}</dd></div>`;
}

function issuesSection(base: string, token: string, issues: readonly ConsoleIssue[] | undefined): string {
  if (issues === undefined) return '';
  const rows = issues
    .map((issue) => {
      const sample = issue.sampleEventIds[0];
      return `<tr data-testid="issue"><td><code>${text(issue.type)}</code></td><td>${issue.handler === null ? '—' : `<code>${text(issue.handler)}</code>`}</td>
<td class="error">${text(`${issue.error.name}: ${issue.error.message}`)}</td><td class="num">${issue.count}</td>
<td>${when(issue.firstSeen)}</td><td>${when(issue.lastSeen)}</td>
<td>${sample === undefined ? '—' : `<a href="${text(base)}/dead-letters/${text(encodeURIComponent(sample))}?type=${text(encodeURIComponent(issue.type))}">a sample</a>`}</td>
<td><form method="post" action="${text(base)}/actions/replay" class="inline" data-testid="replay-issue-form">
<input type="hidden" name="token" value="${text(token)}"><input type="hidden" name="issue" value="${text(issue.key)}">
<button type="submit" data-testid="replay-issue">Replay this issue…</button></form></td></tr>`;
    })
    .join('\n');
  return `<section aria-labelledby="issues-h"><h2 id="issues-h">Issues</h2>
<div id="issues">${
    issues.length === 0
      ? '<p class="empty" data-testid="issues-empty">No open issue.</p>'
      : `<table data-testid="issues"><thead><tr><th scope="col">Type</th><th scope="col">Handler</th><th scope="col">Error</th><th scope="col">Count</th><th scope="col">First seen</th><th scope="col">Last seen</th><th scope="col">Sample</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>`
  }</div></section>`;
}

/** The numbers, the chart, the actions, the issues and the newest dead letters, all in the first paint. */
export function overviewPage(frame: PageFrame, data: OverviewData): string {
  const s = frame.status;
  const base = text(frame.base);
  const quarantined = quarantinedOf(s);
  const main = `<section aria-labelledby="numbers-h"><h2 id="numbers-h">Now</h2>
<dl class="numbers">
${number('waiting', 'Waiting', String(s.waiting))}
${number('delayed', 'Delayed (backoff)', String(s.delayed))}
${number('active', 'Running', String(s.active))}
${number('dead', 'Dead letters', String(s.dead))}
${number('quarantined', 'Quarantined', quarantined === undefined ? '—' : String(quarantined))}
${number('oldest', 'Oldest waiting', age(s.oldestAgeMs))}
</dl></section>
<section aria-labelledby="tries-h"><h2 id="tries-h">Tries per minute, last hour</h2>
<div id="chart">${triesChart(data.hour)}</div>
<p class="legend"><span class="key processed">processed</span> <span class="key retried">retried</span> <span class="key dead">dead</span></p>
<div id="tries-note">${data.triesWired ? '' : '<p class="empty" data-testid="tries-unwired">No worker of this process reports its tries yet: pass the console\'s <code>onJob</code> to <code>inbox.startWorker(router, { onJob })</code>.</p>'}</div>
</section>
<section aria-labelledby="replay-h"><h2 id="replay-h">Replay dead letters</h2>
<form method="post" action="${base}/actions/replay" data-testid="replay-filter-form">
<input type="hidden" name="token" value="${text(frame.token)}">
<label>Event type (empty: every type) <input name="type" data-testid="replay-type" autocomplete="off"></label>
<label>Failed since (UTC, empty: any time) <input name="since" type="datetime-local" step="1" data-testid="replay-since"></label>
<button type="submit" data-testid="replay-filter">Replay…</button>
</form></section>
${replayProgressSection(frame.base, frame.token, data.bulk)}
${issuesSection(frame.base, frame.token, data.issues)}
<section aria-labelledby="dead-h"><h2 id="dead-h">Newest dead letters</h2>
<div id="newest">${deadLetterTable(frame.base, data.newest, 'newest-dead-letters')}</div>
<p><a href="${base}/dead-letters" data-testid="all-dead-letters">All dead letters, page by page</a></p>
</section>`;
  return page(frame, main);
}
