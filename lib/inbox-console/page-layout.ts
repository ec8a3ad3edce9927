import type { InboxStatus } from '../inbox/inbox';
import { text } from './console-text';

/** What every page shows around its own content. */
export interface PageFrame {
  title: string;
  base: string;
  engine: string;
  queue: string;
  status: InboxStatus;
  identity: string;
  /** The action token of this page, for its forms and the script. */
  token: string;
  loopbackOnly: boolean;
  /** A line saying what the last action did, already escaped. */
  notice?: string | undefined;
}

/** The content-security policy of every page: our own script and stylesheet, nothing inline. */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The pause state as every page's header shows it, with the form that flips it. */
function pauseControl(frame: PageFrame): string {
  const paused = frame.status.paused;
  return `<span id="paused-state" data-testid="paused-state" class="badge ${paused ? 'paused' : 'running'}">${paused ? 'paused: no worker starts a try' : 'running'}</span>
<form method="post" action="${text(frame.base)}/actions/${paused ? 'resume' : 'pause'}" class="inline" data-testid="pause-form">
<input type="hidden" name="token" value="${text(frame.token)}">
<button type="submit" data-testid="${paused ? 'resume' : 'pause'}">${paused ? 'Resume the queue' : 'Pause the queue'}</button>
</form>`;
}

/** A whole page: header with the queue, its pause state and who is signed in, then `main`. */
export function page(frame: PageFrame, main: string): string {
  const base = text(frame.base);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="inbox-console-token" content="${text(frame.token)}">
<title>${text(frame.title)} · inbox ${text(frame.queue)}</title>
<link rel="stylesheet" href="${base}/assets/console.css">
</head>
<body data-base="${base}">
<header>
<p class="brand"><a href="${base}/">service-webhooks inbox</a> <code>${text(frame.queue)}</code> on ${text(frame.engine)}</p>
<p class="state">${pauseControl(frame)} <span id="live" class="off" role="status">live updates off</span></p>
<p class="who">Signed in as <strong data-testid="identity">${text(frame.identity)}</strong>${frame.loopbackOnly ? ' · <strong class="warn" data-testid="loopback-only">loopback only: anyone on this machine can use this console</strong>' : ''}</p>
</header>
<main>
${frame.notice === undefined ? '' : `<p class="notice" role="status" data-testid="notice">${frame.notice}</p>`}
<h1>${text(frame.title)}</h1>
${main}
</main>
<script src="${base}/assets/console.js"></script>
</body>
</html>
`;
}
