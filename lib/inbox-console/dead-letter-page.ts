import type { DeadLetter } from '../inbox/inbox';
import { entityOf } from '../events/normalize-event';
import type { EventData } from '../events/data-schemas';
import { block, text, when } from './console-text';
import { handlersOf, reasonOf } from './newer-fields';
import { page, type PageFrame } from './page-layout';

/** The envelope as received, pretty-printed, and its data when it parses. */
function envelopeOf(letter: DeadLetter): { pretty: string; data: unknown } {
  try {
    const envelope = JSON.parse(letter.delivery.envelope) as { data?: unknown };
    return { pretty: JSON.stringify(envelope, null, 2), data: envelope.data };
  } catch {
    return { pretty: letter.delivery.envelope, data: undefined };
  }
}

/** Each handler's state, with "Replay this handler" for those that failed. */
function handlersTable(frame: PageFrame, letter: DeadLetter, after: string | undefined): string {
  const handlers = handlersOf(letter);
  if (handlers === undefined) return '';
  const replay = (
    name: string,
  ) => `<form method="post" action="${text(frame.base)}/actions/replay" class="inline">
<input type="hidden" name="token" value="${text(frame.token)}">
<input type="hidden" name="id" value="${text(letter.delivery.id)}">
<input type="hidden" name="handler" value="${text(name)}">
<input type="hidden" name="type" value="${text(letter.delivery.type)}">${after === undefined ? '' : `<input type="hidden" name="after" value="${text(after)}">`}
<button type="submit" data-testid="replay-handler">Replay this handler</button></form>`;
  const rows = Object.entries(handlers)
    .map(
      ([name, state]) =>
        `<tr data-testid="handler-state"><td><code>${text(name)}</code></td><td class="${state.ok ? 'ok' : 'failed'}">${state.ok ? 'succeeded' : 'failed'}</td><td class="num">${state.attempts}</td><td class="error">${text(state.lastError ?? '—')}</td><td>${state.ok ? '' : replay(name)}</td></tr>`,
    )
    .join('');
  return `<h2>Handlers</h2><table data-testid="handlers"><thead><tr><th scope="col">Handler</th><th scope="col">State</th><th scope="col">Tries</th><th scope="col">Last error</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/**
 * One dead letter: the event as received, its entity, its handlers, its last error and times, "Replay
 * this". `after` is the cursor it was read after, which a handler's replay reads it by again.
 */
export function deadLetterPage(frame: PageFrame, letter: DeadLetter, after?: string): string {
  const d = letter.delivery;
  const { pretty, data } = envelopeOf(letter);
  const entity = typeof data === 'object' && data !== null ? entityOf(d.type, data as EventData) : null;
  const reason = reasonOf(letter);
  const main = `<dl class="facts">
<div><dt>Event id</dt><dd><code data-testid="event-id">${text(d.id)}</code></dd></div>
<div><dt>Type</dt><dd><code>${text(d.type)}</code></dd></div>
<div><dt>Source</dt><dd><code>${text(d.source)}</code></dd></div>
<div><dt>Entity</dt><dd data-testid="entity">${entity === null ? '—' : `${text(entity.kind)} <code>${text(entity.id)}</code>`}</dd></div>
${reason === undefined ? '' : `<div><dt>Why</dt><dd data-testid="reason">${reason === 'invalid' ? 'quarantined: the event did not pass validation' : text(reason)}</dd></div>`}
<div><dt>Event time</dt><dd>${when(d.time)}</dd></div>
<div><dt>Queued at</dt><dd>${when(letter.receivedAt)}</dd></div>
<div><dt>Failed at</dt><dd>${when(letter.failedAt)}</dd></div>
<div><dt>Tries</dt><dd>${letter.attempts}</dd></div>
</dl>
<h2>Last error</h2>
<pre class="error" data-testid="last-error" tabindex="0">${text(letter.lastError ?? '—')}</pre>
${handlersTable(frame, letter, after)}
<form method="post" action="${text(frame.base)}/actions/replay" data-testid="replay-one-form">
<input type="hidden" name="token" value="${text(frame.token)}">
<input type="hidden" name="id" value="${text(d.id)}">
<button type="submit" data-testid="replay-one">Replay this</button>
</form>
<details open><summary>The event as received</summary>
<pre data-testid="envelope" tabindex="0">${block(pretty)}</pre>
</details>`;
  return page({ ...frame, title: `Dead letter ${d.id}` }, main);
}
