import { EVENT_TYPES } from '../../events/catalogue';

const options = EVENT_TYPES.map((type) => `<option value="${type}">${type}</option>`).join('');

/** The web console's page: plain HTML and CSS; the script is served beside it. */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>service-webhooks emulator</title>
<link rel="stylesheet" href="/_console/console.css">
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
</head>
<body>
<header>
  <h1>service-webhooks emulator</h1>
  <p>Console API <code id="api-url"></code> · account <code id="account-id"></code> · <span id="live" class="off">connecting…</span></p>
</header>
<main>
<section>
  <h2>Webhooks</h2>
  <table data-testid="webhooks">
    <thead><tr><th>id</th><th>name</th><th>url</th><th>verified</th><th>last handshake</th><th>events</th></tr></thead>
    <tbody id="webhooks"><tr><td colspan="6" class="empty">No webhook yet. Run <code>service-webhooks listen --forward-to …</code> or register one through the console API.</td></tr></tbody>
  </table>
</section>
<section>
  <h2>Trigger an event</h2>
  <form id="trigger" data-testid="trigger-form">
    <label>Type <select name="type" data-testid="trigger-type">${options}</select></label>
    <label>Layout <select name="layout" data-testid="trigger-layout"><option value="A">A (current)</option><option value="B">B (flat)</option></select></label>
    <label class="wide">Data overrides (JSON, the layout's own field names) <textarea name="data" rows="2" placeholder='{"full_name": "Ada"}' data-testid="trigger-data"></textarea></label>
    <button type="submit" data-testid="trigger-submit">Trigger</button>
    <span id="trigger-result" role="status"></span>
  </form>
</section>
<section>
  <h2>Events <a href="/_emulator/scenario" download="scenario.json" data-testid="export-scenario">Export as scenario</a></h2>
  <div id="events" data-testid="events"><p class="empty">No event yet.</p></div>
</section>
</main>
<script src="/_console/console.js"></script>
</body>
</html>
`;

export const EMULATOR_CONSOLE_CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1b1f24; background: #f6f7f9; }
header { background: #1f2937; color: #f9fafb; padding: .8rem 1.5rem; }
header h1 { font-size: 1.2rem; margin: 0; } header p { margin: .2rem 0 0; color: #d1d5db; }
header code { color: #fff; }
main { padding: 0 1.5rem 2rem; }
h2 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; background: #fff; border-radius: 6px; overflow: hidden; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #e5e7eb; vertical-align: top; font-variant-numeric: tabular-nums; }
th { background: #f3f4f6; font-weight: 600; }
code, pre { font: 12px/1.4 ui-monospace, monospace; }
pre { background: #0f172a; color: #e2e8f0; padding: .6rem .8rem; border-radius: 6px; overflow: auto; max-height: 24rem; margin: .3rem 0; }
.empty { color: #6b7280; }
.yes, .s2 { color: #137333; font-weight: 600; } .no, .s4, .s5, .s0 { color: #b3261e; font-weight: 600; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 999px; font-size: 12px; background: #e5e7eb; margin-right: .3rem; }
.badge.acknowledged { background: #d1fae5; color: #065f46; } .badge.pending { background: #fef3c7; color: #92400e; } .badge.dropped { background: #fee2e2; color: #991b1b; }
form { display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: end; background: #fff; padding: .8rem; border-radius: 6px; }
label { display: flex; flex-direction: column; font-size: 12px; color: #4b5563; gap: .2rem; }
label.wide { flex: 1 1 18rem; } textarea { font: 12px ui-monospace, monospace; }
select, textarea, button { font-size: 13px; padding: .3rem .5rem; }
button { background: #2563eb; color: #fff; border: 0; border-radius: 4px; cursor: pointer; }
button.secondary { background: #e5e7eb; color: #111827; }
.event { background: #fff; border-radius: 6px; padding: .6rem .8rem; margin: 0 0 .6rem; }
.event-head { display: flex; gap: .8rem; align-items: center; flex-wrap: wrap; }
.event-head button { margin-left: auto; white-space: nowrap; flex: none; }
/* Every event's attempts table has the same columns at the same widths, so they line up down the page. */
table.attempts { table-layout: fixed; margin-top: .4rem; }
table.attempts td:nth-child(1) { width: 11rem; } table.attempts td:nth-child(2) { width: 12rem; }
table.attempts td:nth-child(3) { width: 6rem; } table.attempts td:nth-child(4) { width: 6rem; }
table.attempts td:nth-child(5) { width: auto; overflow-wrap: anywhere; } table.attempts td:nth-child(6) { width: 7rem; }
.event-head strong { font-size: 14px; }
details summary { cursor: pointer; color: #2563eb; margin-top: .3rem; }
#live.on { color: #86efac; } #live.off { color: #fca5a5; }
`;
