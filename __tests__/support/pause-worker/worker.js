// One worker process of the pause proof (inbox-pause.proof.test.ts): an inbox worker on QUEUE that
// writes every try's event id to LEDGER as it starts, so the parent counts tries without asking the
// queue. Plain JavaScript over the built package, as a user's worker runs it.
'use strict';
const { appendFileSync } = require('node:fs');
const path = require('node:path');

const env = (name) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`pause-worker/worker.js needs ${name}`);
  return value;
};
// The built package by its path: inside this repository its own name would resolve to ./dist.
const pkg = env('SW_PKG');
const sub = (name) => require(path.join(pkg, 'dist', name, 'index.js'));
const { createEventRouter } = require(pkg);
const ledger = env('LEDGER');

function inbox() {
  if (env('ENGINE') === 'bullmq')
    return sub('bullmq').bullmqInbox({ connection: env('URL'), name: env('QUEUE'), logger: false });
  return sub('pg-boss').pgBossInbox({ connectionString: env('URL'), name: env('QUEUE'), logger: false });
}

const router = createEventRouter().onAny((event) => appendFileSync(ledger, `${event.id}\n`));
inbox()
  .startWorker(router, { concurrency: 4, logger: false })
  .then(() => process.stdout.write(`READY ${env('NAME')}\n`))
  .catch((error) => {
    process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  });
