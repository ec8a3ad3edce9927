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

/** 1: one handler; 3: three named handlers per event, each failing at random (a third of the rate). */
const handlers = Number(process.env.HANDLERS ?? '1');

/** `name` is the handler's when the event has three: the ledger then keys each success by it. */
async function handle(event, name) {
  // With three handlers the kill cuts the first alone: the other two succeed before it.
  const hangs = name === undefined || name === 'h0';
  if (
    hangs &&
    event.id.startsWith('kill-') &&
    !existsSync(path.join(env('LEDGER_DIR'), `killed-${event.id}`))
  ) {
    // Let any handler still finishing here settle first, so the kill cuts this handler alone.
    await sleep(1_500);
    process.stdout.write(`HANG ${event.id}\n`);
    await new Promise(() => undefined);
  }
  const roll = random();
  const fails = name === undefined ? failRate : failRate / 3;
  if (roll < fails) throw new Error('a failure the proof injected');
  if (roll < fails + slowRate) await sleep(timeoutMs * 2 + random() * timeoutMs);
  // The success, recorded outside the receiver before the handler returns: the external ledger, with
  // the time it was written (the proof's processes share the machine's clock).
  appendFileSync(
    ledger,
    `${name === undefined ? event.id : `${event.id}/${name}`} ${instance} ${Date.now()}\n`,
  );
}

/**
 * The receiver's log: a success the store did not record (the stated windows), a handler's or an
 * event's markDone given up on, said apart; and every warning and error of an event as a `LOG` line,
 * which the proof shows beside an event that ran twice unexplained.
 */
const logLine = (level, meta, message) => {
  if (typeof meta?.eventId === 'string')
    process.stdout.write(
      `LOG ${JSON.stringify([Date.now(), level, meta.eventId, meta.handler, meta.reason, message.slice(0, 90)])}\n`,
    );
};
const logger = {
  error(meta, message) {
    logLine('error', meta, message);
    if (/gave up marking the event done/.test(message)) process.stdout.write(`GAVE-UP ${meta.eventId}\n`);
  },
  warn(meta, message) {
    logLine('warn', meta, message);
    if (
      /could not record a handler's success|handler succeeded after the event's lease ran out/.test(message)
    )
      process.stdout.write(`UNRECORDED ${meta.eventId}/${meta.handler}\n`);
  },
};

/**
 * The shared store, saying on stdout each success it recorded for this process (`STORED [key]` for a
 * markDone, `STORED [key, handler]` for a markHandlerDone): after a SIGKILL, the proof reads in them
 * which successes of the killed process the store never heard, the only ones that may run again. A
 * success the store refused (a lease run out) or failed on is `REFUSED [key…]`: the receiver logs a
 * refusal once a minute, so beside an unexplained rerun the proof shows which process it refused.
 */
function reporting(store) {
  const stored = (entry) => (applied) => {
    process.stdout.write(`${applied === false ? 'REFUSED' : 'STORED'} ${JSON.stringify(entry)}\n`);
    return applied;
  };
  const refused = (entry) => (error) => {
    process.stdout.write(`REFUSED ${JSON.stringify(entry)}\n`);
    throw error;
  };
  return new Proxy(store, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name === 'markDone')
        return (key, token, retentionMs) => value.call(target, key, token, retentionMs).then(stored([key]));
      if (name === 'markHandlerDone')
        return (key, token, handler, retentionMs) =>
          value
            .call(target, key, token, handler, retentionMs)
            .then(stored([key, handler]), refused([key, handler]));
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

serve((idempotency) => {
  let router = createEventRouter();
  if (handlers === 1) router = router.on('ag.hid_org.created', (event) => handle(event));
  else
    for (let i = 0; i < handlers; i++)
      router = router.on('ag.hid_org.created', (event) => handle(event, `h${i}`), { name: `h${i}` });
  const app = express();
  app.use(
    '/hooks',
    webhookReceiver({
      bearerTokens: ['tok_proof'],
      router,
      idempotency: { store: reporting(idempotency), leaseMs },
      timeoutMs,
      logger,
      // The store's bookkeeping after answers: a markDone given up on is the window docs/many-instances.md states.
      onDelivery: Object.assign(() => undefined, {
        onBookkeeping: (event) => process.stdout.write(`BOOKKEEPING ${event}\n`),
      }),
    }),
  );
  return app;
});
