import type { EmulatorState } from '../emulator-state';
import { escapeHtml } from '../../escape-html';
import { CONSOLE_HTML } from './console-page';

const escape = escapeHtml;

type Webhook = EmulatorState['webhooks'][number];

function handshakeText(webhook: Webhook): string {
  const h = webhook.lastHandshake;
  if (h === null) return 'none yet';
  return `${h.status === null ? 'no answer' : String(h.status)}${h.reason ? ` — ${h.reason}` : ''} (${h.at.slice(11, 19)})`;
}

function webhookRows(webhooks: EmulatorState['webhooks']): string {
  return webhooks
    .map(
      (w) =>
        `<tr data-testid="webhook-${escape(w.id)}"><td><code>${escape(w.id)}</code></td><td>${escape(w.name)}</td><td><code>${escape(w.url)}</code></td><td class="${w.verified ? 'yes' : 'no'}">${w.verified ? 'yes' : 'no'}</td><td>${escape(handshakeText(w))}</td><td>${w.subscribedEvents.length} types</td></tr>`,
    )
    .join('');
}

function eventSummaries(events: EmulatorState['events']): string {
  return events
    .map(
      ({ event, deliveries }) =>
        `<div class="event" data-testid="event-${escape(event.id)}"><h3><code>${escape(event.type)}</code> <code>${escape(event.id)}</code> <span class="layout">${deliveries.length} deliver${deliveries.length === 1 ? 'y' : 'ies'}</span></h3></div>`,
    )
    .join('');
}

/**
 * The console page with the emulator's state already in it: the first paint shows the webhooks and
 * events that exist (the script then takes over and keeps them live), not "No webhook yet" for the
 * 50 ms until its first fetch answers.
 */
export function firstPaint(state: EmulatorState): string {
  let html = CONSOLE_HTML.replace(
    '<code id="api-url"></code>',
    `<code id="api-url">${escape(state.url)}</code>`,
  ).replace('<code id="account-id"></code>', `<code id="account-id">${escape(state.accountId)}</code>`);
  if (state.webhooks.length > 0)
    html = html.replace(
      /<tbody id="webhooks">.*?<\/tbody>/s,
      `<tbody id="webhooks">${webhookRows(state.webhooks)}</tbody>`,
    );
  if (state.events.length > 0)
    html = html.replace(
      '<div id="events" data-testid="events"><p class="empty">No event yet.</p></div>',
      `<div id="events" data-testid="events">${eventSummaries(state.events)}</div>`,
    );
  return html;
}
