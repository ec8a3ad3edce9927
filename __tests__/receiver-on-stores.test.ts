// The receiver as a user meets it, through each door, on each of the three stores: what the store
// decides (order, fencing, the retried markDone) must not depend on which store it is.
import { Pool } from 'pg';
import { createClient } from 'redis';
import {
  createEventRouter,
  MemoryStore,
  type AnyWebhookEvent,
  type EntityOrderingStore,
  type IdempotencyStore,
  type ReceiverOptions,
} from '../lib';
import { PostgresStore } from '../lib/postgres';
import { RedisStore } from '../lib/redis';
import { buildEvent } from '../lib/testing';
import { delivery, issued, sleep, TOKEN } from './support/contract-rows';
import { DOORS, fetchDoor, type Door, type OpenDoor } from './support/doors';
import { gate } from './support/gate';
import { pollUntil } from './support/poll-until';
import { describeWithPostgres, startPostgresServer, type PostgresServer } from './support/postgres-server';
import { describeWithRedis, startRedisServer, type RedisServer } from './support/redis-server';

interface StoreKind {
  name: string;
  describe: (name: string, body: () => void) => void;
  /** Starts what the store needs (once per file) and gives the store. */
  open(): Promise<IdempotencyStore>;
  close(): Promise<void>;
}

type RedisClient = ReturnType<typeof createClient>;
let redis: { server: RedisServer; client: RedisClient } | undefined;
let postgres: { server: PostgresServer; pool: Pool } | undefined;
let memory: MemoryStore | undefined;

const KINDS: StoreKind[] = [
  {
    name: 'MemoryStore',
    describe,
    open: async () => (memory = new MemoryStore({ logger: false })),
    close: async () => memory?.close(),
  },
  {
    name: 'RedisStore',
    describe: describeWithRedis,
    async open() {
      const server = await startRedisServer();
      const client: RedisClient = createClient({ url: server.url });
      redis = { server, client };
      await client.connect();
      return new RedisStore({ sendCommand: (...args) => client.sendCommand(args), logger: false });
    },
    async close() {
      redis?.client.destroy();
      await redis?.server.close();
    },
  },
  {
    name: 'PostgresStore',
    describe: describeWithPostgres,
    async open() {
      const server = await startPostgresServer();
      const pool = new Pool({ connectionString: server.url, max: 10 });
      pool.on('error', () => undefined); // an idle connection cut at shutdown is not a failure
      postgres = { server, pool };
      const store = new PostgresStore({ pool });
      await store.setup();
      return store;
    },
    async close() {
      await postgres?.pool.end();
      await postgres?.server.close();
    },
  },
];

let passes = 0;
/** An access pass no other test uses. */
const newPass = () => `pass-${process.pid}-${++passes}`;

/** Pairs of times, each as a sender may write it, and what the second one is to the first. */
const TIMES: [string, string, string, 'stale' | 'processed'][] = [
  ['an offset east, earlier than a later Z', '2026-01-01T09:00:00Z', '2026-01-01T10:00:00+02:00', 'stale'],
  [
    'a Z, later than an earlier offset east',
    '2026-01-01T10:00:00+02:00',
    '2026-01-01T09:00:00Z',
    'processed',
  ],
  [
    'an offset west, later than an earlier Z',
    '2026-01-01T10:00:00Z',
    '2026-01-01T06:00:00-05:00',
    'processed',
  ],
  ['a shorter fraction, earlier', '2026-01-01T10:00:00.5Z', '2026-01-01T10:00:00.25Z', 'stale'],
  ['a longer fraction, later', '2026-01-01T10:00:00.25Z', '2026-01-01T10:00:00.5Z', 'processed'],
  ['a fraction, later than none', '2026-01-01T10:00:00Z', '2026-01-01T10:00:00.25Z', 'processed'],
  ['none, earlier than a fraction', '2026-01-01T10:00:00.25Z', '2026-01-01T10:00:00Z', 'stale'],
  [
    'nanoseconds, later than milliseconds',
    '2026-01-01T10:00:00.001Z',
    '2026-01-01T10:00:00.001000001Z',
    'processed',
  ],
  // One instant written two ways: the id breaks the tie, and the second's ("a…") sorts first.
  ['the same instant, a lesser id', '2026-01-01T10:00:00.000Z', '2026-01-01T11:00:00+01:00', 'stale'],
];

for (const kind of KINDS) {
  kind.describe(`a receiver on ${kind.name}`, () => {
    let store: IdempotencyStore;
    let open: OpenDoor[] = [];
    beforeAll(async () => void (store = await kind.open()), 60_000);
    afterAll(() => kind.close());
    afterEach(async () => {
      await Promise.all(open.map((d) => d.close()));
      open = [];
    });
    const start = async (door: Door, options: Partial<ReceiverOptions>) => {
      const d = await door.open({
        bearerTokens: [TOKEN],
        router: createEventRouter(),
        logger: false,
        idempotency: store,
        ...options,
      });
      open.push(d);
      return d;
    };
    /** A receiver whose one handler is ordered, and the ids it saw. */
    const ordered = async () => {
      const seen: string[] = [];
      const router = createEventRouter().on(
        'ag.access_pass.updated',
        (event: AnyWebhookEvent) => void seen.push(event.id),
        { ordering: 'newest-wins' },
      );
      return { d: await start(fetchDoor, { router }), seen };
    };

    it.each(TIMES)('orders by the instant: %s (%s, then %s) → %s', async (_name, first, second, expected) => {
      const { d, seen } = await ordered();
      const pass = newPass();
      // The time as sent, not as the test kit writes it (milliseconds, in UTC).
      const a = { ...buildEvent('ag.access_pass.updated', { id: pass }, { id: `b-${pass}` }), time: first };
      const b = { ...buildEvent('ag.access_pass.updated', { id: pass }, { id: `a-${pass}` }), time: second };
      const answers = [await d.send(delivery(a)), await d.send(delivery(b))];
      expect(answers.map((r) => [r.status, JSON.parse(r.text).status])).toEqual([
        [200, 'processed'],
        [200, expected],
      ]);
      expect(seen).toEqual(expected === 'stale' ? [a.id] : [a.id, b.id]);
    });

    it('breaks a tie of times by the id in UTF-8 byte order, as every store does (U+FFFD before 😀)', async () => {
      const { d, seen } = await ordered();
      const pass = newPass();
      const time = '2026-01-01T10:00:00Z';
      const [first, second] = [`\uFFFD-${pass}`, `😀-${pass}`].map((id) => ({
        ...buildEvent('ag.access_pass.updated', { id: pass }, { id }),
        time,
      })) as [ReturnType<typeof buildEvent>, ReturnType<typeof buildEvent>];
      const answers = [await d.send(delivery(first)), await d.send(delivery(second))];
      expect(answers.map((r) => JSON.parse(r.text).status)).toEqual(['processed', 'processed']);
      expect(seen).toEqual([first.id, second.id]);
    });

    describe.each(DOORS)('through $name', (door) => {
      it('runs each handler once per event: a retry runs only the handlers without a recorded success, on two instances', async () => {
        const runs: string[] = [];
        let emailTries = 0;
        const router = createEventRouter()
          .on('ag.access_pass.issued', (_e, ctx) => void runs.push(`crm:${ctx.handler}`), { name: 'crm' })
          .on(
            'ag.access_pass.issued',
            async (_e, ctx) => {
              runs.push(`email:${ctx.handler}`);
              if (++emailTries <= 2) throw new Error('the mail server said no');
            },
            { name: 'welcome-email' },
          )
          .on('ag.access_pass.*', function audit(_e, ctx) {
            runs.push(`audit:${ctx.handler}`);
          });
        const instances = [await start(door, { router }), await start(door, { router })];
        const event = issued({}, `evt_each_${newPass()}`);
        const answers: [number, string | undefined][] = [];
        for (let i = 0; i < 4; i++) {
          const answer = await (instances[i % 2] as OpenDoor).send(delivery(event));
          answers.push([answer.status, answer.status === 200 ? JSON.parse(answer.text).status : undefined]);
        }
        // 200 only once every handler has succeeded, now or before; then a duplicate.
        expect(answers).toEqual([
          [500, undefined],
          [500, undefined],
          [200, 'processed'],
          [200, 'duplicate'],
        ]);
        expect(runs.sort()).toEqual([
          'audit:audit',
          'crm:crm',
          'email:welcome-email',
          'email:welcome-email',
          'email:welcome-email',
        ]);
      }, 30_000);

      it('tells each handler its attempt: 1 for the first run, one more per failed run of the event, on two instances', async () => {
        const seen: string[] = [];
        let emailTries = 0;
        let soloTries = 0;
        const router = createEventRouter()
          .on('ag.access_pass.issued', (_e, ctx) => void seen.push(`crm:${ctx.attempt}`), { name: 'crm' })
          .on(
            'ag.access_pass.issued',
            (_e, ctx) => {
              seen.push(`email:${ctx.attempt}`);
              if (++emailTries <= 2) throw new Error('the mail server said no');
            },
            { name: 'welcome-email' },
          )
          .on('ag.access_pass.suspended', (_e, ctx) => {
            seen.push(`solo:${ctx.attempt}`);
            if (++soloTries <= 2) throw new Error('not yet');
          });
        const instances = [await start(door, { router }), await start(door, { router })];
        const many = issued({}, `evt_attempt_${newPass()}`);
        const one = buildEvent('ag.access_pass.suspended', {}, { id: `evt_attempt_one_${newPass()}` });
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) {
          statuses.push((await (instances[i % 2] as OpenDoor).send(delivery(many))).status);
          statuses.push((await (instances[(i + 1) % 2] as OpenDoor).send(delivery(one))).status);
        }
        expect(statuses).toEqual([500, 500, 500, 500, 200, 200, 200, 200]);
        expect(seen.sort()).toEqual(['crm:1', 'email:1', 'email:2', 'email:3', 'solo:1', 'solo:2', 'solo:3']);
      }, 30_000);

      it('composes with ordering: a retry reruns only the handlers without a recorded success, ordered ones included; a stale event runs its unordered ones once each', async () => {
        const runs: string[] = [];
        const failedOnce = new Set<string>();
        /** Fails the first run of `label` for an event whose id holds `when`. */
        const failFirst = (label: string, event: AnyWebhookEvent, when: string) => {
          if (event.id.includes(when) && !failedOnce.has(`${label}:${event.id}`)) {
            failedOnce.add(`${label}:${event.id}`);
            throw new Error(`${label} failed once`);
          }
        };
        const router = createEventRouter()
          .on(
            'ag.access_pass.updated',
            (e, ctx) => {
              runs.push(`projection:${e.id.slice(0, 1)}:${ctx.attempt}`);
              failFirst('projection', e, 'c-');
            },
            { name: 'projection', ordering: 'newest-wins' },
          )
          .on(
            'ag.access_pass.updated',
            (e, ctx) => {
              runs.push(`email:${e.id.slice(0, 1)}:${ctx.attempt}`);
              failFirst('email', e, 'a-');
              failFirst('email', e, 'b-');
            },
            { name: 'email' },
          )
          .on('ag.access_pass.*', (e, ctx) => void runs.push(`audit:${e.id.slice(0, 1)}:${ctx.attempt}`), {
            name: 'audit',
          });
        const instances = [await start(door, { router }), await start(door, { router })];
        const pass = newPass();
        const at = (letter: string, time: string) => ({
          ...buildEvent('ag.access_pass.updated', { id: pass }, { id: `${letter}-${pass}` }),
          time,
        });
        const a = at('a', '2026-01-01T10:00:00Z');
        const b = at('b', '2026-01-01T09:00:00Z');
        const c = at('c', '2026-01-01T12:00:00Z');
        const d = at('d', '2026-01-01T11:00:00Z');
        const answers: string[] = [];
        let i = 0;
        for (const event of [a, a, b, b, b, c, c, d]) {
          const answer = await (instances[i++ % 2] as OpenDoor).send(delivery(event));
          answers.push(answer.status === 200 ? JSON.parse(answer.text).status : String(answer.status));
        }
        expect(answers).toEqual([
          '500',
          'processed',
          '500',
          'processed',
          'duplicate',
          '500',
          'processed',
          'processed',
        ]);
        expect(runs).toEqual([
          // a: the ordered handler succeeds and advances the mark although the email failed; its
          // retry runs the email alone.
          ...['projection:a:1', 'email:a:1', 'audit:a:1'],
          'email:a:2',
          // b is older than a: stale, its unordered handlers run once each, the failed one again.
          ...['email:b:1', 'audit:b:1'],
          'email:b:2',
          // c's ordered handler fails: the mark stays, and only it runs again.
          ...['projection:c:1', 'email:c:1', 'audit:c:1'],
          'projection:c:2',
          // d is older than c: c's mark advanced on its retry.
          ...['email:d:1', 'audit:d:1'],
        ]);
      }, 30_000);

      it('fences a run that outlived its lease: its success does not mark done the event another run failed', async () => {
        let run = 0;
        const first = gate('the first run may succeed');
        const second = gate('the second run may fail');
        const router = createEventRouter().on('ag.access_pass.issued', async () => {
          const mine = ++run;
          if (mine === 1) await first.opened; // outlives its lease, then succeeds
          if (mine === 2) {
            await second.opened; // took the lease over; fails after the first run succeeded
            throw new Error('the second run fails');
          }
        });
        const bookkeeping: string[] = [];
        const onDelivery = Object.assign(() => undefined, {
          onBookkeeping: (e: string) => void bookkeeping.push(e),
        });
        // a answers 503 at once and loses its lease soon; b waits for its handler, so it answers 500.
        const a = await start(door, {
          idempotency: { store, leaseMs: 100 },
          timeoutMs: 20,
          router,
          onDelivery,
        });
        const b = await start(door, { idempotency: { store, leaseMs: 10_000 }, timeoutMs: 5_000, router });
        const event = issued({}, `evt_overrun_${newPass()}`);
        expect((await a.send(delivery(event))).status).toBe(503); // past timeoutMs, still running
        await sleep(150); // the 100 ms lease ran out: a wait on the clock itself (the store's too)
        const retried = b.send(delivery(event));
        await pollUntil('the second door took the lease over and ran the handler', () => run === 2);
        first.open();
        await a.drain({ timeoutMs: 5000 });
        expect(bookkeeping).toEqual(['lease-lost']);
        second.open();
        expect((await retried).status).toBe(500);
        // Not acknowledged: the Service's next attempt runs the handler again, not "duplicate".
        const third = await b.send(delivery(event));
        expect([third.status, JSON.parse(third.text).status]).toEqual([200, 'processed']);
        expect(run).toBe(3);
      });

      it('counts a handler success that outlived its lease as lease-lost, each one, though the log says it once a minute', async () => {
        const runs: string[] = [];
        const late = gate('the first runs of the slow handlers may succeed');
        const slow = (name: string) => async () => {
          runs.push(name);
          if (runs.filter((r) => r === name).length === 1) await late.opened; // outlives its lease
        };
        const router = createEventRouter()
          .on('ag.access_pass.issued', slow('slow-1'), { name: 'slow-1' })
          .on('ag.access_pass.issued', slow('slow-2'), { name: 'slow-2' })
          .on(
            'ag.access_pass.issued',
            () => {
              runs.push('quick');
              // Failing on a's run: so a records each slow success apart instead of marking the event done.
              if (runs.filter((r) => r === 'quick').length === 1) throw new Error('the first run fails');
            },
            { name: 'quick' },
          );
        const bookkeeping: string[] = [];
        const warned: string[] = [];
        const a = await start(door, {
          idempotency: { store, leaseMs: 100 },
          timeoutMs: 20,
          router,
          logger: {
            warn: (_meta: unknown, message: string) => void warned.push(message),
            error: () => undefined,
          },
          onDelivery: Object.assign(() => undefined, {
            onBookkeeping: (e: string) => void bookkeeping.push(e),
          }),
        });
        const b = await start(door, { idempotency: { store, leaseMs: 10_000 }, timeoutMs: 5_000, router });
        const event = issued({}, `evt_handler_overrun_${newPass()}`);
        expect((await a.send(delivery(event))).status).toBe(503); // past timeoutMs, slow ones running
        await sleep(150); // the 100 ms lease ran out: a wait on the clock itself (the store's too)
        const taken = await b.send(delivery(event));
        expect([taken.status, JSON.parse(taken.text).status]).toEqual([200, 'processed']);
        late.open();
        await a.drain({ timeoutMs: 5000 });
        // Two successes the store refused: two counts, where the rate-limited log has one line.
        expect(bookkeeping).toEqual(['lease-lost', 'lease-lost']);
        expect(warned.filter((m) => m.includes("succeeded after the event's lease ran out"))).toHaveLength(1);
        expect(runs.sort()).toEqual(['quick', 'quick', 'slow-1', 'slow-1', 'slow-2', 'slow-2']);
      });

      it("retries a failed advance of the entity's mark in the background, so an older event is then stale, not held off", async () => {
        const entities = store as IdempotencyStore & EntityOrderingStore;
        let failures = 2;
        const flaky: IdempotencyStore & EntityOrderingStore = {
          claim: (...args) => entities.claim(...args),
          markDone: (...args) => entities.markDone(...args),
          release: (...args) => entities.release(...args),
          get: (key) => entities.get(key),
          leaseEntity: (...args) => entities.leaseEntity(...args),
          releaseEntity: (...args) => entities.releaseEntity(...args),
          advanceEntity: (...args) =>
            failures-- > 0 ? Promise.reject(new Error('connection reset')) : entities.advanceEntity(...args),
        };
        const seen: string[] = [];
        const router = createEventRouter().on(
          'ag.access_pass.updated',
          (event: AnyWebhookEvent) => void seen.push(event.id),
          { ordering: 'newest-wins' },
        );
        const d = await start(door, { idempotency: flaky, router });
        const pass = newPass();
        const at = (second: number) =>
          buildEvent('ag.access_pass.updated', { id: pass }, { time: `2026-01-01T10:00:0${second}Z` });
        const newer = at(5);
        expect(JSON.parse((await d.send(delivery(newer))).text)).toMatchObject({ status: 'processed' });
        expect(await d.drain({ timeoutMs: 10_000 })).toMatchObject({ drained: true });
        // Without the retry the entity stays leased for a minute: the older event would get 409.
        const older = await d.send(delivery(at(4)));
        expect([older.status, JSON.parse(older.text).status]).toEqual([200, 'stale']);
        expect([failures, seen]).toEqual([-1, [newer.id]]);
      });

      it('retries a failed markDone in the background, holding the event meanwhile, until it is recorded', async () => {
        let failures = 2;
        const flaky: IdempotencyStore = {
          claim: (...args) => store.claim(...args),
          release: (...args) => store.release(...args),
          get: (key) => store.get(key),
          markDone: (...args) =>
            failures-- > 0 ? Promise.reject(new Error('connection reset')) : store.markDone(...args),
        };
        let runs = 0;
        const router = createEventRouter().on('ag.access_pass.issued', () => void runs++);
        const bookkeeping: string[] = [];
        const onDelivery = Object.assign(() => undefined, {
          onBookkeeping: (e: string) => void bookkeeping.push(e),
        });
        const d = await start(door, { idempotency: flaky, router, onDelivery });
        const event = issued({}, `evt_markdone_${newPass()}`);
        expect(JSON.parse((await d.send(delivery(event))).text)).toMatchObject({ status: 'processed' });
        expect((await d.send(delivery(event))).status).toBe(409);
        expect(await d.drain({ timeoutMs: 10_000 })).toMatchObject({ drained: true });
        expect(bookkeeping).toEqual(['mark-done-recovered']);
        // Recorded in the store itself: another receiver on it sees a duplicate and runs nothing.
        const other = await start(door, { router });
        expect(JSON.parse((await other.send(delivery(event))).text)).toMatchObject({ status: 'duplicate' });
        expect(runs).toBe(1);
      });

      it('does not call a markDone retry the store refused a recovery: it counts lease-lost alone', async () => {
        let calls = 0;
        const refusing: IdempotencyStore = {
          claim: (...args) => store.claim(...args),
          release: (...args) => store.release(...args),
          get: (key) => store.get(key),
          // The first try fails; the retry finds the lease taken over (as a store answers then).
          markDone: () =>
            ++calls === 1 ? Promise.reject(new Error('connection reset')) : Promise.resolve(false),
        };
        const bookkeeping: string[] = [];
        const said: string[] = [];
        const d = await start(door, {
          idempotency: refusing,
          router: createEventRouter().on('ag.access_pass.issued', () => undefined),
          logger: {
            info: (_meta: unknown, message: string) => void said.push(message),
            warn: (_meta: unknown, message: string) => void said.push(message),
            error: (_meta: unknown, message: string) => void said.push(message),
          },
          onDelivery: Object.assign(() => undefined, {
            onBookkeeping: (e: string) => void bookkeeping.push(e),
          }),
        });
        const event = issued({}, `evt_markdone_refused_${newPass()}`);
        expect(JSON.parse((await d.send(delivery(event))).text)).toMatchObject({ status: 'processed' });
        expect(await d.drain({ timeoutMs: 10_000 })).toMatchObject({ drained: true });
        expect([calls, bookkeeping]).toEqual([2, ['lease-lost']]);
        expect(said.filter((m) => /marked the event done on a retry/.test(m))).toEqual([]);
      });
    });
  });
}

/** A store over a backend that answers every script or statement with `reply`. */
const confused: [string, (reply: unknown) => IdempotencyStore][] = [
  [
    'RedisStore',
    (reply) =>
      new RedisStore({
        logger: false,
        sendCommand: async (command) => (command === 'EVALSHA' ? reply : 'OK'),
      }),
  ],
  [
    'PostgresStore',
    (reply) =>
      new PostgresStore({
        pool: { query: async () => ({ rows: [{ result: reply, released: reply }] }) },
      }),
  ],
];
const REPLIES: unknown[] = [7, -1, null, '', 'OK', '0 ', 1.5];

describe('the shared stores read an answer by one rule: what is not a known answer throws', () => {
  it.each(confused.flatMap(([name, make]) => REPLIES.map((reply) => [name, reply, make] as const)))(
    '%s answered %j: every call rejects, naming the store',
    async (name, reply, make) => {
      const store = make(reply) as IdempotencyStore & RedisStore;
      const position = { time: '0'.repeat(22), eventId: 'e' };
      const calls = {
        claim: () => store.claim('k', 't', 1000),
        leaseEntity: () => store.leaseEntity('k', 't', 1000, position),
        advanceEntity: () => store.advanceEntity('k', 't', position, 1000),
      };
      for (const call of Object.values(calls))
        await expect(call()).rejects.toThrow(
          new RegExp(`^\\[service-webhooks\\] ${name}: \\w+ got an unexpected answer`),
        );
    },
  );

  it.each(confused.flatMap(([name, make]) => [null, 7].map((reply) => [name, reply, make] as const)))(
    'a receiver on %s answered %j: 503, unacknowledged, and no handler runs',
    async (_name, reply, make) => {
      let runs = 0;
      const router = createEventRouter().on('ag.access_pass.issued', () => void runs++);
      const d = await fetchDoor.open({
        bearerTokens: [TOKEN],
        router,
        logger: false,
        idempotency: make(reply),
      });
      const answer = await d.send(delivery(issued()));
      expect([answer.status, JSON.parse(answer.text).type]).toEqual([
        503,
        'urn:service-webhooks:problem:store-unavailable',
      ]);
      expect(runs).toBe(0);
    },
  );
});
