import { escapeControl } from '../logger';
import type { BulkReplayState } from './bulk-replay';
import { text } from './console-text';

/** A bulk replay's progress in words: `replayed N of M; stopped` after a cancel. */
function progressWords(state: BulkReplayState): string {
  const what = escapeControl(state.what);
  const of = `replayed ${state.replayed} of ${state.total ?? '?'}`;
  switch (state.state) {
    case 'counting':
      return `Counting ${what}…`;
    case 'running':
      return `Replaying ${what}: ${of}`;
    case 'stopping':
      return `Stopping the replay of ${what} at the end of this page: ${of}`;
    case 'done':
      return `Replay of ${what}: ${of}; done`;
    case 'stopped':
      return `Replay of ${what}: ${of}; stopped`;
    case 'failed':
      return `Replay of ${what}: ${of}; failed (the inbox did not answer; what was put back stays put back)`;
  }
}

/** What the live stream sends of a bulk replay (`event: replay`) to its page. */
export interface ProgressEvent {
  state: BulkReplayState['state'];
  replayed: number;
  total: number | null;
  /** What the page shows, control characters escaped (the script sets it as text). */
  words: string;
  /** Whether it runs, so Cancel is shown. */
  busy: boolean;
}

/** A bulk replay as its page is told: the counts and the words, not the filter's raw text. */
export function progressEvent(state: BulkReplayState): ProgressEvent {
  return {
    state: state.state,
    replayed: state.replayed,
    total: state.total,
    words: progressWords(state),
    busy: state.state === 'counting' || state.state === 'running',
  };
}

/**
 * The overview's bulk replay section: a progress bar and its words, with Cancel while it runs. In the
 * first paint; the script keeps it live from `event: replay`.
 */
export function replayProgressSection(
  base: string,
  token: string,
  state: BulkReplayState | undefined,
): string {
  const busy = state !== undefined && (state.state === 'counting' || state.state === 'running');
  const max = Math.max(1, state?.total ?? 0);
  return `<section aria-labelledby="bulk-h" id="bulk-replay"${state === undefined ? ' hidden' : ''}><h2 id="bulk-h">Bulk replay</h2>
<progress id="replay-bar" data-testid="replay-bar" aria-labelledby="replay-words" max="${max}" value="${Math.min(state?.replayed ?? 0, max)}"></progress>
<p id="replay-words" data-testid="replay-progress" role="status">${state === undefined ? '' : text(progressWords(state))}</p>
<form method="post" action="${text(base)}/actions/cancel" class="inline" id="cancel-form" data-testid="cancel-form"${busy ? '' : ' hidden'}>
<input type="hidden" name="token" value="${text(token)}">
<button type="submit" data-testid="cancel-replay-run">Cancel the replay</button>
</form></section>`;
}
