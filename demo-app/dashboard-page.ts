/** The dashboard: one static page that follows the receiver's log over server-sent events. */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>service-webhooks demo</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; color: #1b1f24; }
  h1 { font-size: 1.3rem; margin: 0 0 .5rem; }
  #webhook { margin: 0 0 1rem; padding: .5rem .75rem; border-radius: 6px; background: #f3f4f6; }
  .yes { color: #137333; font-weight: 600; } .no { color: #b3261e; font-weight: 600; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #e5e7eb; font-variant-numeric: tabular-nums; }
  th { background: #f9fafb; position: sticky; top: 0; }
  td.outcome-processed, td.outcome-duplicate { color: #137333; } td.outcome-failed { color: #b3261e; }
  code { font-size: 12px; }
</style>
</head>
<body>
<h1>service-webhooks demo receiver</h1>
<div id="webhook">Webhook: <span id="webhook-id">not registered yet</span> · verified: <span id="verified" class="no">no</span> · deliveries received: <span id="count">0</span></div>
<table>
  <thead><tr><th>#</th><th>time</th><th>type</th><th>layout</th><th>event id</th><th>attempt</th><th>status</th><th>outcome</th></tr></thead>
  <tbody id="rows"></tbody>
</table>
<script>
  const rows = document.getElementById('rows');
  function cell(text, className) {
    const td = document.createElement('td');
    td.textContent = String(text);
    if (className) td.className = className;
    return td;
  }
  function showWebhook(webhook) {
    document.getElementById('webhook-id').textContent = webhook.id || 'not registered yet';
    const verified = document.getElementById('verified');
    verified.textContent = webhook.verified ? 'yes' : 'no';
    verified.className = webhook.verified ? 'yes' : 'no';
  }
  function addRow(entry) {
    const tr = document.createElement('tr');
    tr.append(cell(entry.seq), cell(entry.at.slice(11, 23)), cell(entry.type), cell(entry.layout),
      cell(entry.eventId), cell(entry.attempt), cell(entry.status), cell(entry.outcome, 'outcome-' + entry.outcome));
    rows.prepend(tr);
    document.getElementById('count').textContent = String(rows.children.length);
  }
  const stream = new EventSource('events');
  stream.addEventListener('webhook', (e) => showWebhook(JSON.parse(e.data)));
  stream.addEventListener('delivery', (e) => addRow(JSON.parse(e.data)));
</script>
</body>
</html>
`;
