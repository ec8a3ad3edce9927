import { Redis } from 'ioredis';
import { createClient } from 'redis';
import type { IdempotencyStore } from '../lib/idempotency/idempotency-store';
import { OptionsError } from '../lib/options-error';
import { RedisStore } from 'service-webhooks/redis';
import { runStoreContract } from 'service-webhooks/testing';
import { freePort } from './support/server-binary';
import { describeWithRedis, startRedisServer, type RedisServer } from './support/redis-server';
import { receiverOn } from './support/store-receiver';

const HOUR = 60 * 60 * 1000;

/** Clients wired as docs/many-instances.md shows: fail fast while Redis is away, reconnect by themselves. */
async function nodeRedis(port: number, live: boolean) {
  const client = createClient({
    url: `redis://127.0.0.1:${port}`,
    disableOfflineQueue: true,
    socket: { connectTimeout: 1_000, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 500) },
  });
  client.on('error', () => undefined);
  // connect() retries until a server answers: wait for it only when one is there.
  const connecting = client.connect().catch(() => undefined);
  if (live) await connecting;
  return {
    store: new RedisStore({ sendCommand: (...args) => client.sendCommand(args) }),
    close: () => client.destroy(),
  };
}

async function ioredis(port: number, live: boolean) {
  const client = new Redis(port, '127.0.0.1', {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(50 * 2 ** times, 500),
  });
  client.on('error', () => undefined);
  if (live) await new Promise((resolve) => client.once('ready', resolve));
  return {
    store: new RedisStore({ sendCommand: (command, ...args) => client.call(command, ...args) }),
    close: () => client.disconnect(),
  };
}

type Made = { store: IdempotencyStore; close(): unknown };

/** Contract runs for one client: the store, and one over a port nothing listens on. */
function contractFor(
  name: string,
  make: (port: number, live: boolean) => Made | Promise<Made>,
  server: () => RedisServer,
) {
  const closers = new Map<IdempotencyStore, () => unknown>();
  const build = async (port: number, live: boolean) => {
    const made = await make(port, live);
    closers.set(made.store, () => made.close());
    return made.store;
  };
  runStoreContract(`RedisStore over ${name}`, () => build(server().port, true), {
    makeUnavailableStore: async () => build(await freePort(), false),
    close: (store) => closers.get(store)?.(),
  });
}

describeWithRedis('RedisStore on a real redis-server', () => {
  let server: RedisServer;
  beforeAll(async () => void (server = await startRedisServer()), 30_000);
  afterAll(() => server?.close());

  contractFor('node-redis', nodeRedis, () => server);
  contractFor('ioredis', ioredis, () => server);

  describe('its commands', () => {
    let client: ReturnType<typeof createClient>;
    const sent: string[][] = [];
    let store: RedisStore;
    beforeAll(async () => {
      client = createClient({ url: server.url });
      await client.connect();
      store = new RedisStore({
        prefix: 'test:',
        sendCommand: (...args) => {
          sent.push(args);
          return client.sendCommand(args);
        },
      });
    });
    afterAll(() => client?.destroy());
    beforeEach(() => void (sent.length = 0));

    it('loads its scripts once, then spends one round trip per call, each on one prefixed key', async () => {
      await store.claim('a', 't', HOUR);
      expect(sent.map((c) => c.slice(0, 2).join(' '))).toEqual([
        'SCRIPT LOAD',
        'SCRIPT LOAD',
        'SCRIPT LOAD',
        'CONFIG GET',
        expect.stringMatching(/^EVALSHA [0-9a-f]{40}$/),
      ]);
      sent.length = 0;
      await store.markDone('a', 't', HOUR);
      await store.claim('b', 't', HOUR);
      await store.release('b', 't');
      await store.get('a');
      const position = { time: '0'.repeat(22), eventId: 'e' };
      // The entity scripts are loaded by the first entity call only: a store that orders nothing never loads them.
      await store.leaseEntity('a', 't', HOUR, position);
      expect(sent.splice(4, 3).map((c) => c.slice(0, 2).join(' '))).toEqual(Array(3).fill('SCRIPT LOAD'));
      await store.advanceEntity('a', 't', position, HOUR);
      await store.releaseEntity('a', 't');
      expect(sent.map((c) => c[0])).toEqual([
        'EVALSHA',
        'EVALSHA',
        'EVALSHA',
        'GET',
        ...Array(3).fill('EVALSHA'),
      ]);
      const keys = sent.map((c) => (c[0] === 'EVALSHA' ? [c[2], c[3]] : ['1', c[1]]));
      expect(keys).toEqual([
        ['1', 'test:a'],
        ['1', 'test:b'],
        ['1', 'test:b'],
        ['1', 'test:a'],
        // An entity's key has a word of its own: it never meets an event's.
        ...Array(3).fill(['1', 'test:entity:a']),
      ]);
      sent.length = 0;
      // The renewal scripts (an event's, an entity's) are loaded by the first renewal only: a
      // receiver never renews. Both are loaded then; the next renewal of either is one round trip.
      await store.renewLease('b', 't', HOUR);
      expect(sent.map((c) => c.slice(0, 2).join(' '))).toEqual([
        'SCRIPT LOAD',
        'SCRIPT LOAD',
        expect.stringMatching(/^EVALSHA [0-9a-f]{40}$/),
      ]);
      expect(sent[2]?.slice(2, 4)).toEqual(['1', 'test:b']);
      sent.length = 0;
      await store.renewEntity('a', 't', HOUR);
      expect(sent.map((c) => c.slice(0, 4).join(' '))).toEqual([
        expect.stringMatching(/^EVALSHA [0-9a-f]{40} 1 test:entity:a$/),
      ]);
    });

    it.each([
      ['volatile-lru', 1],
      ['allkeys-lru', 1],
      ['noeviction', 0],
    ])('reads maxmemory-policy once and warns when it is %s, naming noeviction', async (policy, warnings) => {
      const warned: string[] = [];
      await client.sendCommand(['CONFIG', 'SET', 'maxmemory-policy', policy]);
      try {
        const watched = new RedisStore({
          prefix: 'policy:',
          sendCommand: (...args) => client.sendCommand(args),
          logger: { warn: (_meta: unknown, message: string) => void warned.push(message) },
        });
        await watched.claim('a', 't', HOUR);
        await watched.claim('b', 't', HOUR);
        expect(warned).toHaveLength(warnings);
        if (warnings > 0) expect(warned[0]).toMatch(new RegExp(`maxmemory-policy is ${policy}.*noeviction`));
      } finally {
        await client.sendCommand(['CONFIG', 'SET', 'maxmemory-policy', 'noeviction']);
      }
    });

    it('says nothing, and works, where CONFIG is refused (managed Redis)', async () => {
      const warned: string[] = [];
      const managed = new RedisStore({
        prefix: 'managed:',
        sendCommand: (...args) =>
          args[0] === 'CONFIG'
            ? Promise.reject(new Error("ERR unknown command 'CONFIG'"))
            : client.sendCommand(args),
        logger: { warn: (_meta: unknown, message: string) => void warned.push(message) },
      });
      expect(await managed.claim('a', 't', HOUR)).toBe('claimed');
      expect(warned).toEqual([]);
    });

    it('runs a script with EVAL when the server forgot it, then with EVALSHA again', async () => {
      await store.claim('warm', 't', HOUR);
      await client.sendCommand(['SCRIPT', 'FLUSH']);
      sent.length = 0;
      expect(await store.claim('flushed', 't', HOUR)).toBe('claimed');
      expect(await store.claim('flushed', 'u', HOUR)).toBe('busy');
      expect(sent.map((c) => c[0])).toEqual(['EVALSHA', 'EVAL', 'EVALSHA']);
    });

    it('hashes a long key instead of storing it', async () => {
      await store.claim('x'.repeat(5_000), 't', HOUR);
      const keys = (await client.sendCommand(['KEYS', 'test:#sha256:*'])) as string[];
      expect(keys.some((k) => k.length === 'test:#sha256:'.length + 64)).toBe(true);
    });

    it('says which call failed when the client fails, and tries the script load again later', async () => {
      let down = true;
      const flaky = new RedisStore({
        sendCommand: (...args) =>
          down ? Promise.reject(new Error('connection is closed')) : client.sendCommand(args),
      });
      await expect(flaky.claim('f', 't', HOUR)).rejects.toThrow(
        '[service-webhooks] RedisStore: load failed: connection is closed',
      );
      await expect(flaky.get('f')).rejects.toThrow(
        '[service-webhooks] RedisStore: get failed: connection is closed',
      );
      down = false;
      expect(await flaky.claim(`f-${Date.now()}`, 't', HOUR)).toBe('claimed');
    });

    it("loads the handler scripts at the first event of several handlers; each call one round trip on the event's key", async () => {
      await store.claim('h', 't', HOUR);
      sent.length = 0;
      await store.markHandlerDone('h', 't', 'crm', HOUR);
      await store.release('h', 't');
      expect(await store.claimHandlers('h', 't2', HOUR)).toEqual({
        result: 'claimed',
        succeeded: ['crm'],
        attempt: 1,
      });
      expect(sent.map((c) => c.slice(0, 2).join(' '))).toEqual([
        'SCRIPT LOAD',
        'SCRIPT LOAD',
        expect.stringMatching(/^EVALSHA [0-9a-f]{40}$/),
        expect.stringMatching(/^EVALSHA [0-9a-f]{40}$/),
        expect.stringMatching(/^EVALSHA [0-9a-f]{40}$/),
      ]);
      expect(sent.slice(2).map((c) => c.slice(2, 4))).toEqual(Array(3).fill(['1', 'test:h']));
    });

    it.each([
      ['a done key', 'd', 'done', 'done'],
      ['a held key', 'p:old-token', 'busy', 'processing'],
    ])(
      'reads %s written by the version before handlers were recorded as it did',
      async (_name, value, claim, state) => {
        await client.sendCommand(['SET', 'test:old', value, 'PX', String(HOUR)]);
        expect(await store.claimHandlers('old', 'new', HOUR)).toEqual({ result: claim, succeeded: [] });
        expect(await store.claim('old', 'new', HOUR)).toBe(claim);
        expect(await store.markHandlerDone('old', 'new', 'crm', HOUR)).toBe(false);
        expect(await store.get('old')).toBe(state);
        expect(await client.sendCommand(['GET', 'test:old'])).toBe(value);
        await client.sendCommand(['DEL', 'test:old']);
      },
    );

    it('reads recorded handlers written by the version before runs were counted: its names, attempt 1; a failed run is then counted', async () => {
      await client.sendCommand(['SET', 'test:old-h', 'h:0:\ncrm\naudit', 'PX', String(HOUR)]);
      const first = { result: 'claimed', succeeded: ['crm', 'audit'], attempt: 1 };
      expect(await store.claimHandlers('old-h', 't1', HOUR)).toEqual(first);
      await store.release('old-h', 't1', HOUR);
      expect(await store.claimHandlers('old-h', 't2', HOUR)).toEqual({ ...first, attempt: 2 });
      expect(await store.get('old-h')).toBe('processing');
      await client.sendCommand(['DEL', 'test:old-h']);
    });

    it('refuses a value it did not write instead of guessing', async () => {
      await client.sendCommand(['SET', 'test:foreign', 'hello']);
      await expect(store.get('foreign')).rejects.toThrow(/unexpected answer/);
    });
  });
});

describeWithRedis('a receiver on RedisStore while Redis goes away and comes back', () => {
  it.each([
    ['node-redis', nodeRedis],
    ['ioredis', ioredis],
  ])(
    '%s: 503 at once while Redis is down, no handler run; processed once it is back',
    async (_name, make) => {
      const redis = await startRedisServer();
      const { store, close } = await make(redis.port, true);
      try {
        const { handled, send, sendUntilAcknowledged, timed } = receiverOn(store);
        expect((await send('before')).status).toBe(200);
        await redis.stop();
        const during = await timed('during');
        expect([during.answer.status, during.answer.headers['retry-after']]).toEqual([503, '30']);
        expect(during.ms).toBeLessThan(2_000);
        expect(handled).toEqual(['before']);

        await redis.start();
        const after = await sendUntilAcknowledged('during', 100);
        expect([after.status, after.body.status]).toEqual([200, 'processed']);
        expect((await send('during')).body.status).toBe('duplicate');
        expect(handled).toEqual(['before', 'during']);
      } finally {
        await close();
        await redis.close();
      }
    },
    60_000,
  );
});

describeWithRedis('a receiver on RedisStore while Redis stops answering', () => {
  it('503 within idempotency.timeoutMs, no handler run; the late claim is given back, so the event is processed once Redis answers', async () => {
    const redis = await startRedisServer();
    const { store, close } = await nodeRedis(redis.port, true);
    try {
      const { handled, send, sendUntilAcknowledged, timed } = receiverOn(store, { timeoutMs: 300 });
      expect((await send('before')).status).toBe(200);
      redis.pause();
      const during = await timed('frozen');
      expect([during.answer.status, during.answer.headers['retry-after']]).toEqual([503, '30']);
      expect(during.ms).toBeLessThan(1_500);
      expect(handled).toEqual(['before']);

      redis.resume();
      // The claim Redis applies on waking holds the event under a token nobody runs; the receiver
      // releases it, or the event would wait a whole lease (60 s here) behind 409s.
      const after = await sendUntilAcknowledged('frozen', 30);
      expect([after.status, after.body.status]).toEqual([200, 'processed']);
      expect(handled).toEqual(['before', 'frozen']);
    } finally {
      redis.resume();
      await close();
      await redis.close();
    }
  }, 60_000);
});

describe('RedisStore options', () => {
  const sendCommand = async () => null;
  it.each([
    ['no options', undefined, /takes an options object/],
    ['no sendCommand', {}, /sendCommand must be a function/],
    ['a client instead of a function', { sendCommand: { sendCommand } }, /sendCommand must be a function/],
    ['a prefix that is not a string', { sendCommand, prefix: 7 }, /prefix must be a string/],
    ['a misspelt option', { sendCommand, prefx: 'a:' }, /unknown option "prefx"; did you mean "prefix"\?/],
  ])('throws OptionsError at construction for %s', (_name, options, message) => {
    const build = () => new RedisStore(options as never);
    expect(build).toThrow(OptionsError);
    expect(build).toThrow(message);
  });
});
