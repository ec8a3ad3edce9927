/** The console's stylesheet, served as a file: the CSP allows no inline style. Colours pass WCAG AA. */
export const CONSOLE_CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1b1f24; background: #f6f7f9; }
header { background: #1f2937; color: #f9fafb; padding: .6rem 1.5rem; display: flex; flex-wrap: wrap; gap: .3rem 1.5rem; align-items: center; }
header p { margin: 0; } header a { color: #fff; font-weight: 600; } header code { color: #fff; }
header .warn { color: #fde68a; }
main { padding: .5rem 1.5rem 2rem; max-width: 72rem; }
h1 { font-size: 1.3rem; margin: .8rem 0 .4rem; } h2 { font-size: 1.05rem; margin: 1.2rem 0 .5rem; }
a { color: #1d4ed8; }
dl.numbers { display: flex; flex-wrap: wrap; gap: .6rem; margin: 0; }
dl.numbers div { background: #fff; border-radius: 6px; padding: .5rem .9rem; min-width: 8rem; }
dl.numbers dt { font-size: 12px; color: #4b5563; } dl.numbers dd { margin: 0; font-size: 1.5rem; font-weight: 600; font-variant-numeric: tabular-nums; }
dl.facts div { display: flex; gap: 1rem; } dl.facts dt { width: 8rem; color: #4b5563; } dl.facts dd { margin: 0; }
table { border-collapse: collapse; width: 100%; background: #fff; border-radius: 6px; overflow: hidden; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #e5e7eb; vertical-align: top; }
th { background: #f3f4f6; font-weight: 600; } td.num { font-variant-numeric: tabular-nums; text-align: right; }
td.error { overflow-wrap: anywhere; color: #991b1b; } td.ok { color: #166534; } td.failed { color: #991b1b; }
code, pre { font: 12px/1.4 ui-monospace, monospace; }
pre { background: #0f172a; color: #e2e8f0; padding: .6rem .8rem; border-radius: 6px; overflow: auto; max-height: 32rem; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.error { background: #fef2f2; color: #7f1d1d; }
.empty { color: #4b5563; }
.badge { display: inline-block; padding: 0 .5rem; border-radius: 999px; font-size: 12px; }
.badge.running { background: #d1fae5; color: #065f46; } .badge.paused { background: #fef3c7; color: #78350f; }
.badge.quarantined { background: #ede9fe; color: #4c1d95; }
form { display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: end; background: #fff; padding: .8rem; border-radius: 6px; }
form.inline { display: inline-flex; padding: 0 .4rem; background: transparent; }
label { display: flex; flex-direction: column; font-size: 12px; color: #374151; gap: .2rem; }
input, button { font-size: 13px; padding: .3rem .5rem; }
button { background: #1d4ed8; color: #fff; border: 0; border-radius: 4px; cursor: pointer; }
.notice { background: #ecfdf5; color: #065f46; padding: .5rem .8rem; border-radius: 6px; }
.legend .key::before { content: ""; display: inline-block; width: .8rem; height: .8rem; margin-right: .3rem; vertical-align: -1px; }
.legend .processed::before { background: #15803d; } .legend .retried::before { background: #b45309; } .legend .dead::before { background: #b91c1c; }
.pages { margin: .6rem 0; display: flex; gap: 1rem; }
#live.on { color: #86efac; } #live.off { color: #fca5a5; }
details summary { cursor: pointer; color: #1d4ed8; margin-top: .6rem; }
[hidden] { display: none !important; }
progress { width: 100%; max-width: 36rem; height: 1rem; }
svg { max-width: 100%; height: auto; background: #fff; border-radius: 6px; }
`;
