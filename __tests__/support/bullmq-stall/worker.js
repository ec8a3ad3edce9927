// A BullMQ inbox worker whose handler kills its own process mid-try (run by bullmq-worker.test.ts):
// what an out-of-memory or a crash in native code does to a worker. Plain JavaScript over the built
// package, as a user's app runs it.
'use strict';
const path = require('node:path');

const env = (name) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`bullmq-stall/worker.js needs ${name}`);
  return value;
};
const pkg = env('SW_PKG');
const { createEventRouter } = require(pkg);
const { bullmqInbox } = require(path.join(pkg, 'dist', 'bullmq', 'index.js'));

// lockDurationMs at its least, so the killed try's lock runs out soon; maxStalledCount at its default.
const inbox = bullmqInbox({
  connection: env('URL'),
  name: env('QUEUE'),
  lockDurationMs: 1000,
  logger: false,
});
const router = createEventRouter().onAny(() => {
  process.stdout.write('RUN\n');
  process.kill(process.pid, 'SIGKILL');
  return new Promise(() => undefined);
});
const logger = { error: (_meta, message) => process.stdout.write(`LOG ${message}\n`) };
inbox.startWorker(router, { idempotency: false, logger }).then(
  () => process.stdout.write('READY\n'),
  (error) => {
    process.stdout.write(`FAILED ${error.message}\n`);
    process.exit(1);
  },
);
