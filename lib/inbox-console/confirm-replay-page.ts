import type { ReplayFilter } from '../inbox/inbox';
import { text, when } from './console-text';
import { page, type PageFrame } from './page-layout';

/** What a bulk replay would put back, said in words, for the confirmation and the log. */
export function filterWords(filter: ReplayFilter): string {
  const type = filter.type === undefined ? 'every dead letter' : `every dead letter of type ${filter.type}`;
  return filter.since === undefined ? type : `${type} that failed since ${when(filter.since)}`;
}

/** The confirmation a bulk replay asks for first: nothing is replayed until this form is sent. */
export function confirmReplayPage(frame: PageFrame, filter: ReplayFilter): string {
  const base = text(frame.base);
  const main = `<p data-testid="confirm-text">Put back ${text(filterWords(filter))} (${frame.status.dead} dead letters in all) into the queue? Their handlers run again.</p>
<form method="post" action="${base}/actions/replay" class="inline" data-testid="confirm-form">
<input type="hidden" name="token" value="${text(frame.token)}">
<input type="hidden" name="type" value="${text(filter.type ?? '')}">
<input type="hidden" name="since" value="${filter.since === undefined ? '' : text(filter.since.toISOString())}">
<input type="hidden" name="confirmed" value="yes">
<button type="submit" data-testid="confirm-replay">Replay them</button>
</form>
<a href="${base}/" data-testid="cancel-replay">Cancel</a>`;
  return page({ ...frame, title: 'Replay dead letters?' }, main);
}
