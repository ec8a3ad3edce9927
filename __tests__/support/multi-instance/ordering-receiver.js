// One receiver process of the ordering proof (ordering-proof.test.ts), over the compiled package.
// Every handler run is written to one shared ledger (O_APPEND, so lines from the three processes
// land whole and in the order they were written): `start`, then `ok` or `fail`.
'use strict';
const http = require('node:http');
const { appendFileSync } = require('node:fs');
const path = require('node:path');
const { openStore } = require('./open-store');

const env = (name) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`ordering-receiver.js needs ${name}`);
  return value;
};
const lib = env('SW_LIB');
const { createNodeHandler, createEventRouter } = require(lib);
const instance = env('INSTANCE');
const ledger = env('LEDGER');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

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

async function main() {
  const idempotency = await openStore(lib, env('STORE'), env('STORE_URL'));
  const router = createEventRouter()
    .on('ag.access_pass.*', handler('pass'), { ordering: 'newest-wins' })
    // A template runs an ordered handler and one without the option: that one sees every event.
    .on('ag.card_template.updated', handler('template'), { ordering: 'newest-wins' })
    .on('ag.card_template.updated', handler('every'));
  const handle = createNodeHandler({
    bearerTokens: ['tok_proof'],
    router,
    idempotency,
    timeoutMs: 5_000,
    retryAfterSeconds: 1,
    logger: false,
    path: '/hooks',
  });
  const server = http.createServer((req, res) => void handle(req, res));
  server.listen(Number(env('PORT')), '127.0.0.1', () => process.stdout.write(`READY ${instance}\n`));
  server.on('error', (error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  });
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
