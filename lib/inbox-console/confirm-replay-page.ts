import type { ReplayFilter } from '../inbox/inbox';
import { text, when } from './console-text';
import type { ConsoleIssue } from './newer-fields';
import { page, type PageFrame } from './page-layout';

/** What a bulk replay would put back, said in words, for the confirmation and the log. */
export function filterWords(filter: ReplayFilter): string {
  const type = filter.type === undefined ? 'every dead letter' : `every dead letter of type ${filter.type}`;
  return filter.since === undefined ? type : `${type} that failed since ${when(filter.since)}`;
}

/** An issue's dead letters, said in words: its type, its handler and its masked error. */
export function issueWords(issue: ConsoleIssue): string {
  return `the dead letters of the issue ${issue.type} · ${issue.handler ?? 'the whole event'} · ${issue.error.name}: ${issue.error.message}`;
}

/**
 * The confirmation a bulk replay asks for first (a filter, or an issue's dead letters): nothing is
 * replayed until this form is sent.
 */
export function confirmReplayPage(frame: PageFrame, filter: ReplayFilter, issue?: ConsoleIssue): string {
  const base = text(frame.base);
  const words =
    issue === undefined
      ? `${text(filterWords(filter))} (${frame.status.dead} dead letters in all)`
      : `${text(issueWords(issue))} (${issue.count} dead letter${issue.count === 1 ? '' : 's'})`;
  const fields =
    issue === undefined
      ? `<input type="hidden" name="type" value="${text(filter.type ?? '')}">
<input type="hidden" name="since" value="${filter.since === undefined ? '' : text(filter.since.toISOString())}">`
      : `<input type="hidden" name="issue" value="${text(issue.key)}">`;
  const main = `<p data-testid="confirm-text">Put back ${words} into the queue? Their handlers run again; the overview shows the progress, with a button to cancel.</p>
<form method="post" action="${base}/actions/replay" class="inline" data-testid="confirm-form">
<input type="hidden" name="token" value="${text(frame.token)}">
${fields}
<input type="hidden" name="confirmed" value="yes">
<button type="submit" data-testid="confirm-replay">Replay them</button>
</form>
<a href="${base}/" data-testid="cancel-replay">Cancel</a>`;
  return page({ ...frame, title: 'Replay dead letters?' }, main);
}
