// One process of the inbox kill test (run by run-kill-proof.ts): a receiver (ROLE=receiver) that
// enqueues into the inbox, or a worker (ROLE=worker) that runs the handlers. Plain JavaScript over
// the built package, as a user's app runs it.
'use strict';
const { appendFileSync, existsSync } = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { createHash } = require('node:crypto');

const env = (name) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`inbox-kill/node.js needs ${name}`);
  return value;
};
// The built package by its path: inside this repository its own name would resolve to ./dist.
const pkg = env('SW_PKG');
const sub = (name) => require(path.join(pkg, 'dist', name, 'index.js'));
const { createEventRouter, createNodeHandler } = require(pkg);
const role = env('ROLE');
const engine = env('ENGINE');
const url = env('URL');
const dir = env('LEDGER_DIR');
const seed = env('SEED');
const failRate = Number(env('FAIL_RATE'));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const hang = (what) => {
  process.stdout.write(`HANG ${what}\n`);
  return new Promise(() => undefined);
};
/** A number in [0, 1) from the seed and the words: the same run decides the same way. */
const roll = (...words) =>
  createHash('sha256')
    .update([seed, ...words].join('|'))
    .digest()
    .readUInt32BE(0) /
  2 ** 32;

async function open() {
  if (engine === 'bullmq') {
    const { bullmqInbox } = sub('bullmq');
    const { RedisStore } = sub('redis');
    const Redis = require('ioredis');
    const client = new Redis(url, { maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    const store = new RedisStore({ sendCommand: (c, ...a) => client.call(c, ...a), logger: false });
    return {
      inbox: bullmqInbox({ connection: url, name: env('QUEUE'), lockDurationMs: 2000, logger: false }),
      store,
    };
  }
  const { pgBossInbox } = sub('pg-boss');
  const { PostgresStore } = sub('postgres');
  const { PgBoss } = require('pg-boss');
  const { Pool } = require('pg');
  const pool = new Pool({ connectionString: url, max: 6 });
  pool.on('error', () => undefined);
  const store = new PostgresStore({ pool });
  await store.setup();
  // A boss of our own, so a killed worker's job is taken back within seconds, not pg-boss's minute.
  const boss = new PgBoss({ connectionString: url, superviseIntervalSeconds: 1, max: 6 });
  boss.on('error', () => undefined);
  await boss.start();
  return { inbox: pgBossInbox({ boss, name: env('QUEUE'), expireInSeconds: 3 }), store };
}

async function receiver({ inbox, store }) {
  // Killed once mid-enqueue: before the queue heard of the event, and once after it did but before
  // the answer went out.
  const wrapped = {
    ...inbox,
    async enqueue(delivery) {
      const marker = (when) => path.join(dir, `killed-${when}-${delivery.id}`);
      if (delivery.id === 'kill-before-enqueue' && !existsSync(marker('r'))) await hang(delivery.id);
      await inbox.enqueue(delivery);
      if (delivery.id === 'kill-after-enqueue' && !existsSync(marker('r'))) await hang(delivery.id);
    },
  };
  const handler = createNodeHandler({
    bearerTokens: ['tok_kill'],
    router: createEventRouter(),
    inbox: wrapped,
    // Short, so a killed receiver's claim frees up within the test.
    idempotency: { store, leaseMs: 3000, timeoutMs: 3000 },
    timeoutMs: 1000,
    logger: false,
  });
  const server = http.createServer((req, res) => void handler(req, res));
  await new Promise((resolve) => server.listen(Number(env('PORT')), '127.0.0.1', resolve));
}

/** Each handler's effect is a line `<event id>/<handler>` in the ledger: what must happen once. */
const HANDLERS = ['crm', 'email', 'audit'];

/**
 * The event id in a worker's store key: `handled:` (the worker's prefix, run-queued-event.ts
 * handledKey) before `idempotencyKey(scope, source, id)` = `<len>:<scope><len>:<source><len>:<id>`
 * (lib/idempotency/store-keys.ts). Read by the lengths, not matched on the id's end: `evt_1_24` must
 * not read as `evt_1_124`'s. Undefined for any other shape (a hashed key: none of ours is that long).
 */
function eventIdOf(key) {
  const prefix = 'handled:';
  if (!key.startsWith(prefix)) return undefined;
  let at = prefix.length;
  const parts = [];
  for (let i = 0; i < 3; i++) {
    const colon = key.indexOf(':', at);
    const digits = key.slice(at, colon);
    if (colon < 0 || !/^(0|[1-9][0-9]*)$/.test(digits)) return undefined;
    const end = colon + 1 + Number(digits);
    if (end > key.length) return undefined;
    parts.push(key.slice(colon + 1, end));
    at = end;
  }
  return at === key.length ? parts[2] : undefined;
}

async function worker({ inbox, store }) {
  const runs = new Map();
  const ledger = path.join(dir, `effects-${process.pid}.log`);
  // Which handler successes this process saw the store record: an effect in a SIGKILLed worker's
  // ledger that is not here may rightly run again (the kill fell between the effect and the store's
  // answer), one that is here must not. A key that does not parse is written as it is, and the runner
  // refuses any line that names no event's handler: a record lost to a parse slip would excuse.
  const recorded = path.join(dir, `recorded-${process.pid}.log`);
  const record = (key, handlers) => {
    const id = eventIdOf(key);
    const lines = id === undefined ? [`unparsed ${key}`] : handlers.map((h) => `${id}/${h}`);
    appendFileSync(recorded, `${lines.join('\n')}\n`);
    return id;
  };
  // The worker is killed on kill-worker once crm's success reached the store, while email runs:
  // the next try must not run crm again.
  let crmRecorded;
  const crmInStore = new Promise((resolve) => (crmRecorded = resolve));
  // Behind the inbox every handler's success of an event of several is recorded by markHandlerDone
  // as it succeeds, the last one too (run-queued-event.ts, queuedHandlers' wrap), and then the event
  // by markDone: after that no try runs any of its handlers, so markDone records all three.
  const markHandlerDone = store.markHandlerDone.bind(store);
  store.markHandlerDone = async (key, token, handler, retentionMs) => {
    const applied = await markHandlerDone(key, token, handler, retentionMs);
    if (applied === true && record(key, [handler]) === 'kill-worker' && handler === 'crm') crmRecorded();
    return applied;
  };
  const markDone = store.markDone.bind(store);
  store.markDone = async (key, token, retentionMs) => {
    const applied = await markDone(key, token, retentionMs);
    if (applied === true) record(key, HANDLERS);
    return applied;
  };
  const handle = (name) => async (event) => {
    const id = `${event.id}/${name}`;
    const run = (runs.get(id) ?? 0) + 1;
    runs.set(id, run);
    const killing = event.id === 'kill-worker' && !existsSync(path.join(dir, `killed-w-${event.id}`));
    if (killing && name === 'email') {
      await crmInStore;
      await hang(event.id);
    }
    // Up to 2 s, most much shorter.
    await sleep(Math.floor(roll(id, run, 'time') ** 3 * 2000));
    if (!(killing && name === 'crm') && roll(id, run, 'fail') < failRate)
      throw new Error(`an injected failure of ${name} (run ${run})`);
    appendFileSync(ledger, `${id}\n`);
  };
  let router = createEventRouter();
  for (const name of HANDLERS) router = router.onAny(handle(name), { name });
  await inbox.startWorker(router, {
    concurrency: 8,
    attempts: 4,
    backoff: { delayMs: 100, maxDelayMs: 400 },
    idempotency: store,
    timeoutMs: 5000,
    logger: false,
  });
}

open()
  .then(async (opened) => {
    await (role === 'receiver' ? receiver(opened) : worker(opened));
    process.stdout.write(`READY ${env('NAME')}\n`);
  })
  .catch((error) => {
    process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  });
