// The Fetch door served by Bun.serve or Deno.serve, for the runtime contract test. Plain CommonJS
// over the package compiled to SW_LIB, so both runtimes run it as it is.
// GET /__open?options=<json> builds a receiver with those options and answers its id; requests to
// /h/<id> go to it; GET /__runs/<id> answers how often its handlers ran, by event id.
'use strict';
const { createEventRouter, createFetchHandler, RetryLater } = require(process.env.SW_LIB);

const receivers = new Map();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The same cues as the contract's counting router (by the event's `title`). */
function countingRouter(runs) {
  const handler = async (event) => {
    runs[event.id] = (runs[event.id] ?? 0) + 1;
    const cue = event.data && event.data.title;
    if (cue === 'fail') throw new Error('secret=hunter2 at /srv/app.js');
    if (cue === 'retry-later') throw new RetryLater('downstream is down', { retryAfterSeconds: 7 });
    if (cue === 'slow') await sleep(300);
  };
  return createEventRouter().on('ag.*', handler).onUnhandled(handler);
}

async function serve(request) {
  const url = new URL(request.url);
  if (url.pathname === '/__open') {
    const options = JSON.parse(url.searchParams.get('options') ?? '{}');
    const runs = {};
    const id = String(receivers.size + 1);
    receivers.set(id, {
      runs,
      handler: createFetchHandler({ ...options, router: countingRouter(runs), logger: false }),
    });
    return Response.json({ id });
  }
  const runs = /^\/__runs\/(\d+)$/.exec(url.pathname);
  if (runs) return Response.json(receivers.get(runs[1]).runs);
  const target = /^\/h\/(\d+)$/.exec(url.pathname);
  if (target) return receivers.get(target[1]).handler(request);
  return new Response('no such path', { status: 404 });
}

const announce = (port) => console.log(`PORT ${port}`);
if (typeof Bun !== 'undefined') {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: serve });
  announce(server.port);
} else if (typeof Deno !== 'undefined') {
  Deno.serve({ port: 0, hostname: '127.0.0.1', onListen: ({ port }) => announce(port) }, serve);
} else {
  throw new Error('run this with bun or deno');
}
