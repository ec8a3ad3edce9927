// One receiver instance for the multi-instance proof, run as its own node process by run-proof.ts.
// Plain JavaScript over the package compiled to SW_LIB, so it runs without a TypeScript loader.
'use strict';
const { appendFileSync, existsSync } = require('node:fs');
const path = require('node:path');
const express = require('express');
const { receiverProcess, sleep } = require('./receiver-process');

const { env, lib, instance, serve } = receiverProcess('receiver.js');
const { webhookReceiver, createEventRouter } = lib;
const ledger = path.join(env('LEDGER_DIR'), `${instance}-${process.pid}.log`);
const timeoutMs = Number(env('TIMEOUT_MS'));
const leaseMs = Number(env('LEASE_MS'));
const failRate = Number(env('FAIL_RATE'));
const slowRate = Number(env('SLOW_RATE'));

/** mulberry32: faults are random but replayable from SEED. */
let seed = Number(env('SEED')) >>> 0;
function random() {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

async function handle(event) {
  if (event.id.startsWith('kill-') && !existsSync(path.join(env('LEDGER_DIR'), `killed-${event.id}`))) {
    // Let any handler still finishing here settle first, so the kill cuts this handler alone.
    await sleep(1_500);
    process.stdout.write(`HANG ${event.id}\n`);
    await new Promise(() => undefined);
  }
  const roll = random();
  if (roll < failRate) throw new Error('a failure the proof injected');
  if (roll < failRate + slowRate) await sleep(timeoutMs * 2 + random() * timeoutMs);
  // The success, recorded outside the receiver before the handler returns: the external ledger.
  appendFileSync(ledger, `${event.id} ${instance}\n`);
}

serve((idempotency) => {
  const router = createEventRouter().on('ag.hid_org.created', handle);
  const app = express();
  app.use(
    '/hooks',
    webhookReceiver({
      bearerTokens: ['tok_proof'],
      router,
      idempotency: { store: idempotency, leaseMs },
      timeoutMs,
      logger: false,
      // The store's bookkeeping after answers: a markDone given up on is the window docs/many-instances.md states.
      onDelivery: Object.assign(() => undefined, {
        onBookkeeping: (event) => process.stdout.write(`BOOKKEEPING ${event}\n`),
      }),
    }),
  );
  return app;
});
