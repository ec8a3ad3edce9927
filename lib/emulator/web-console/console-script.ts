/**
 * The web console's script, plain browser JavaScript with no build step. It renders the state from
 * `/_emulator/state` again on each server-sent change; open payloads and answers stay open.
 */
export const EMULATOR_CONSOLE_JS = String.raw`'use strict';
(function () {
  var open = new Set();
  var pending = null;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === 'text') node.textContent = attrs[key];
      else if (key === 'className') node.className = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { if (child) node.append(child); });
    return node;
  }
  function pretty(value) { return JSON.stringify(value, null, 2); }
  function prettyText(text) {
    if (text === null || text === undefined) return '(no answer)';
    try { return pretty(JSON.parse(text)); } catch (e) { return text === '' ? '(empty body)' : text; }
  }
  function toggle(id, summary, body) {
    var details = el('details', { 'data-testid': id }, [el('summary', { text: summary }), body]);
    details.open = open.has(id);
    details.addEventListener('toggle', function () { if (details.open) open.add(id); else open.delete(id); });
    return details;
  }
  function handshakeText(w) {
    var h = w.lastHandshake;
    if (!h) return 'none yet';
    return (h.status === null ? 'no answer' : String(h.status)) + (h.reason ? ' — ' + h.reason : '') + ' (' + h.at.slice(11, 19) + ')';
  }
  function renderWebhooks(webhooks) {
    var body = document.getElementById('webhooks');
    body.replaceChildren();
    if (webhooks.length === 0) {
      body.append(el('tr', {}, [el('td', { colspan: '6', className: 'empty', text: 'No webhook yet.' })]));
      return;
    }
    webhooks.forEach(function (w) {
      body.append(el('tr', { 'data-testid': 'webhook-' + w.id }, [
        el('td', {}, [el('code', { text: w.id })]), el('td', { text: w.name }), el('td', {}, [el('code', { text: w.url })]),
        el('td', { className: w.verified ? 'yes' : 'no', text: w.verified ? 'yes' : 'no' }),
        el('td', { text: handshakeText(w) }), el('td', { text: w.subscribedEvents.length + ' types' }),
      ]));
    });
  }
  function attemptRow(a, key, delivery) {
    var status = a.status === null ? 'no answer' : String(a.status);
    var cls = 's' + (a.status === null ? '0' : String(a.status).charAt(0));
    var answer = el('div', {}, [
      el('div', { text: 'Receiver answer' }), el('pre', { 'data-testid': 'answer-body', text: prettyText(a.responseBody) }),
      el('div', { text: 'Request headers (token masked)' }), el('pre', { 'data-testid': 'request-headers', text: pretty(a.requestHeaders) }),
      el('div', { text: 'Answer headers' }), el('pre', { text: pretty(a.responseHeaders) }),
    ]);
    return el('tr', { 'data-testid': 'attempt' }, [
      el('td', { text: (delivery > 1 ? 'delivery ' + delivery + ', ' : '') + 'attempt ' + a.attempt }),
      el('td', {}, [el('code', { text: a.webhookId })]),
      el('td', { className: cls, 'data-testid': 'attempt-status', text: status }),
      el('td', { text: a.durationMs + ' ms' }), el('td', { text: a.outcome + (a.error ? ' — ' + a.error : '') }),
      el('td', {}, [toggle(key, 'answer', answer)]),
    ]);
  }
  function renderEvent(view) {
    var e = view.event;
    // One badge per webhook: a resend is another delivery to the same webhook, counted, not repeated.
    var badges = view.webhooks.map(function (w) {
      var states = Object.keys(w.states);
      var text = states.map(function (s) { return w.deliveries > 1 ? s + ' ×' + w.states[s] : s; }).join(', ');
      return el('span', { className: 'badge ' + states[states.length - 1], 'data-testid': 'delivery-badge', text: w.webhookId + ': ' + text });
    });
    if (badges.length === 0) badges = [el('span', { className: 'badge dropped', text: 'no verified webhook receives it' })];
    var resend = el('button', { type: 'button', className: 'secondary', 'data-testid': 'resend', text: 'Resend' });
    resend.addEventListener('click', function () { post('/_emulator/events/' + encodeURIComponent(e.id) + '/resend', {}); });
    var deliveries = {};
    var rows = view.attempts.map(function (a, i) {
      if (a.attempt === 1) deliveries[a.webhookId] = (deliveries[a.webhookId] || 0) + 1;
      return attemptRow(a, 'answer-' + e.id + '-' + i, deliveries[a.webhookId] || 1);
    });
    var attempts = el('table', { className: 'attempts' }, [el('tbody', {}, rows)]);
    return el('div', { className: 'event', 'data-testid': 'event', 'data-event-id': e.id, 'data-type': e.type }, [
      el('div', { className: 'event-head' }, [
        el('strong', { text: e.type }), el('code', { text: e.id }),
        el('span', { text: (e.dataschema ? 'layout A' : 'layout B') + ' · ' + e.time }),
      ].concat(badges, [resend])),
      view.attempts.length ? attempts : null,
      toggle('payload-' + e.id, 'payload', el('pre', { 'data-testid': 'payload', text: pretty(e) })),
    ]);
  }
  function render(state) {
    document.getElementById('api-url').textContent = state.url;
    document.getElementById('account-id').textContent = state.accountId;
    renderWebhooks(state.webhooks);
    var events = document.getElementById('events');
    events.replaceChildren();
    if (state.events.length === 0) events.append(el('p', { className: 'empty', text: 'No event yet.' }));
    state.events.forEach(function (view) { events.append(renderEvent(view)); });
  }
  function refresh() {
    if (pending) return;
    pending = setTimeout(function () {
      pending = null;
      fetch('/_emulator/state').then(function (r) { return r.json(); }).then(render);
    }, 50);
  }
  function post(path, body) {
    return fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (json) { return { ok: r.ok, json: json }; }); });
  }
  document.getElementById('trigger').addEventListener('submit', function (event) {
    event.preventDefault();
    var form = event.target;
    var result = document.getElementById('trigger-result');
    var field = function (name) { return form.elements.namedItem(name); };
    var body = { type: field('type').value, layout: field('layout').value };
    if (field('data').value.trim() !== '') {
      try { body.data = JSON.parse(field('data').value); } catch (e) { result.textContent = 'Data is not valid JSON.'; return; }
    }
    post('/_emulator/events', body).then(function (r) {
      result.textContent = r.ok ? 'Triggered ' + r.json.event.id + ' → ' + r.json.webhookIds.length + ' webhook(s)' : r.json.detail;
    });
  });
  var live = document.getElementById('live');
  var stream = new EventSource('/_emulator/stream');
  stream.onopen = function () { live.textContent = 'live'; live.className = 'on'; refresh(); };
  stream.onerror = function () { live.textContent = 'disconnected, retrying…'; live.className = 'off'; };
  ['webhook', 'webhook-deleted', 'event', 'attempt', 'delivery'].forEach(function (kind) { stream.addEventListener(kind, refresh); });
  refresh();
})();
`;
