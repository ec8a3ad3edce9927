// One receiver process of the ordering proof (ordering-guard.proof.test.ts), over the compiled package.
// Every handler run is written to one shared ledger (O_APPEND, so lines from the three processes
// land whole and in the order they were written): `start`, then `ok` or `fail`.
'use strict';
const { appendFileSync } = require('node:fs');
const { receiverProcess, sleep } = require('./receiver-process');

const { env, lib, instance, serve } = receiverProcess('ordering-receiver.js');
const { createNodeHandler, createEventRouter } = lib;
const ledger = env('LEDGER');

/** A handler that writes its run to the ledger; the delivery's headers say how long it takes and whether it fails. */
const handler = (name) => async (event, ctx) => {
  const line = (what) => appendFileSync(ledger, `${what} ${name} ${event.id} ${instance}\n`);
  line('start');
  await sleep(Number(ctx.header('x-proof-delay') ?? 0));
  if (ctx.header('x-proof-fail') === '1') {
    line('fail');
    throw new Error('a failure the proof injected');
  }
  line('ok');
};

serve((idempotency) => {
  const router = createEventRouter()
    .on('ag.access_pass.*', handler('pass'), { ordering: 'newest-wins', name: 'pass' })
    // A template runs an ordered handler and one without the option: that one sees every event.
    .on('ag.card_template.updated', handler('template'), { ordering: 'newest-wins', name: 'template' })
    .on('ag.card_template.updated', handler('every'), { name: 'every' });
  const handle = createNodeHandler({
    bearerTokens: ['tok_proof'],
    router,
    idempotency,
    timeoutMs: 5_000,
    retryAfterSeconds: 1,
    logger: false,
    path: '/hooks',
  });
  return (req, res) => void handle(req, res);
});
