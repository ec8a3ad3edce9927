// The start-up every receiver process of the multi-instance proofs shares (receiver.js,
// ordering-receiver.js): its settings from the environment, the package compiled to SW_LIB, its shared
// store, and a server on 127.0.0.1:PORT that says READY once it listens.
'use strict';
const http = require('node:http');
const { openStore } = require('./open-store');

/**
 * The process named `script`: `env(name)` reads a setting (a missing one is the proof's bug, so it
 * throws), `lib` is the compiled package, `instance` the process's name in the proof's lines.
 */
function receiverProcess(script) {
  const env = (name) => {
    const value = process.env[name];
    if (value === undefined) throw new Error(`${script} needs ${name}`);
    return value;
  };
  const libPath = env('SW_LIB');
  const instance = env('INSTANCE');

  /**
   * Opens the store, asks `listener(idempotency)` for the request listener (an express app, or a
   * function over a node handler) and serves it; writes `READY <instance>` once listening. A start-up
   * failure ends the process with its reason on stderr.
   */
  function serve(listener) {
    const start = async () => {
      const idempotency = await openStore(libPath, env('STORE'), env('STORE_URL'));
      const server = http.createServer(listener(idempotency));
      server.listen(Number(env('PORT')), '127.0.0.1', () => process.stdout.write(`READY ${instance}\n`));
      server.on('error', (error) => {
        process.stderr.write(`${error.message}\n`);
        process.exit(1);
      });
    };
    start().catch((error) => {
      process.stderr.write(`${error.stack}\n`);
      process.exit(1);
    });
  }

  return { env, lib: require(libPath), instance, serve };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

module.exports = { receiverProcess, sleep };
