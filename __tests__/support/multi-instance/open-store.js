// The shared store a receiver process of a multi-instance proof opens, over the compiled package.
'use strict';
const path = require('node:path');

/** `store`: 'redis' (node-redis), 'ioredis' or 'postgres'; wired as the README shows. */
async function openStore(lib, store, url) {
  if (store === 'ioredis') {
    const { RedisStore } = require(path.join(lib, 'redis'));
    const Redis = require('ioredis');
    const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    await new Promise((resolve) => client.once('ready', resolve));
    return new RedisStore({
      sendCommand: (command, ...args) => client.call(command, ...args),
      logger: false,
    });
  }
  if (store === 'redis') {
    const { RedisStore } = require(path.join(lib, 'redis'));
    const { createClient } = require('redis');
    const client = createClient({ url, disableOfflineQueue: true });
    client.on('error', () => undefined);
    await client.connect();
    return new RedisStore({ sendCommand: (...args) => client.sendCommand(args), logger: false });
  }
  const { PostgresStore } = require(path.join(lib, 'postgres'));
  const { Pool } = require('pg');
  const pool = new Pool({ connectionString: url, max: 8 });
  pool.on('error', () => undefined);
  const pgStore = new PostgresStore({ pool });
  // The chaos may be restarting PostgreSQL as this process starts: try setup() again, as an app's own
  // start-up would, for at most 15 s.
  for (let attempt = 1; ; attempt++) {
    try {
      await pgStore.setup();
      return pgStore;
    } catch (error) {
      if (attempt >= 60) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

module.exports = { openStore };
