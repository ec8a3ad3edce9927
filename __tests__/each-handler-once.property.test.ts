// Each handler once, as a property: routers of 1–5 named handlers, each failing at random on some of
// its tries, events delivered with retries and duplicates to two receivers sharing one store (Redis,
// then PostgreSQL, real servers). Every handler's side effect happens exactly once per event, and a
// 200 comes only once all of them have. Replay a failure with PROPERTY_SEED (fast-check prints the
// seed and path); PROPERTY_RUNS raises the number of routers tried.
import fc from 'fast-check';
import { Pool } from 'pg';
import { createClient } from 'redis';
import { createEventRouter, type IdempotencyStore } from '../lib';
import { PostgresStore } from '../lib/postgres';
import { RedisStore } from '../lib/redis';
import { buildEvent } from '../lib/testing';
import { delivery, TOKEN } from './support/contract-rows';
import { fetchDoor, type OpenDoor } from './support/doors';
import { describeWithPostgres, startPostgresServer } from './support/postgres-server';
import { describeWithRedis, startRedisServer } from './support/redis-server';

const SEED = Number(process.env.PROPERTY_SEED ?? 20261126);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 25);
/** Deliveries of one event before the test gives up on a 200 (the Service retries for 6 hours). */
const MAX_DELIVERIES = 40;

/** A handler: whether it is ordered, and on which of its tries for an event it fails. */
const handlerArb = fc.record({
  ordered: fc.boolean(),
  failsOn: fc.array(fc.boolean(), { maxLength: 3 }),
});
/** One delivery: to which instance, and whether a duplicate goes to the other at the same time. */
const stepArb = fc.record({ instance: fc.nat(1), duplicate: fc.boolean(), extra: fc.boolean() });
const caseArb = fc.record({
  handlers: fc.array(handlerArb, { minLength: 1, maxLength: 5 }),
  events: fc.integer({ min: 1, max: 3 }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 12 }),
});
type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

let runs = 0;

/** Plays one case against two receivers over `stores` (one each); resolves to what went wrong, or nothing. */
async function play(c: Case, stores: [IdempotencyStore, IdempotencyStore]): Promise<void> {
  const run = `${process.pid}-${++runs}`;
  const effects = new Map<string, number>();
  const tries = new Map<string, number>();
  let router = createEventRouter();
  c.handlers.forEach((h, i) => {
    const name = `h${i}`;
    router = router.on(
      'ag.access_pass.updated',
      async (event) => {
        const key = `${event.id}/${name}`;
        const attempt = tries.get(key) ?? 0;
        tries.set(key, attempt + 1);
        await new Promise((resolve) => setImmediate(resolve));
        if (h.failsOn[attempt] === true) throw new Error(`${name} fails on try ${attempt + 1}`);
        effects.set(key, (effects.get(key) ?? 0) + 1);
      },
      { name, ...(h.ordered ? { ordering: 'newest-wins' as const } : {}) },
    );
  });
  const open = (store: IdempotencyStore) =>
    fetchDoor.open({ bearerTokens: [TOKEN], router, logger: false, idempotency: store });
  const instances: OpenDoor[] = [await open(stores[0]), await open(stores[1])];
  try {
    for (let e = 0; e < c.events; e++) {
      // Each event its own entity, so ordered handlers are never stale: all must run.
      const event = buildEvent(
        'ag.access_pass.updated',
        { id: `pass-${run}-${e}` },
        { id: `evt-${run}-${e}` },
      );
      const allDone = () => c.handlers.every((_h, i) => effects.get(`${event.id}/h${i}`) === 1);
      const check = (status: number, body: string) => {
        if (status === 200 && JSON.parse(body).status === 'processed' && !allDone())
          throw new Error(`answered 200 before every handler succeeded: ${JSON.stringify([...effects])}`);
        if (status === 200 && !allDone()) throw new Error(`acknowledged (${body}) with a handler not done`);
      };
      let acknowledged = false;
      for (let d = 0; d < MAX_DELIVERIES && !acknowledged; d++) {
        const step = c.steps[d % c.steps.length] as Case['steps'][number];
        const first = (instances[step.instance] as OpenDoor).send(delivery(event));
        const second = step.duplicate
          ? (instances[1 - step.instance] as OpenDoor).send(delivery(event))
          : undefined;
        const answers = await Promise.all([first, ...(second === undefined ? [] : [second])]);
        for (const answer of answers) {
          check(answer.status, answer.text);
          if (answer.status === 200) acknowledged = true;
        }
      }
      if (!acknowledged) throw new Error(`never acknowledged in ${MAX_DELIVERIES} deliveries`);
      // Duplicates after the 200 run nothing.
      for (const step of c.steps.filter((s) => s.extra)) {
        const answer = await (instances[step.instance] as OpenDoor).send(delivery(event));
        expect([answer.status, JSON.parse(answer.text).status]).toEqual([200, 'duplicate']);
      }
      const counts = c.handlers.map((_h, i) => effects.get(`${event.id}/h${i}`) ?? 0);
      expect(counts).toEqual(c.handlers.map(() => 1));
    }
  } finally {
    await Promise.all(instances.map((i) => i.close()));
  }
}

function property(stores: () => [IdempotencyStore, IdempotencyStore]) {
  return async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, (c) => play(c, stores())),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  };
}

describeWithRedis('each handler once on two receivers sharing a Redis store', () => {
  let server: Awaited<ReturnType<typeof startRedisServer>>;
  type RedisClient = ReturnType<typeof createClient>;
  const clients: RedisClient[] = [];
  let stores: [IdempotencyStore, IdempotencyStore];
  beforeAll(async () => {
    server = await startRedisServer();
    const store = async () => {
      const client: RedisClient = createClient({ url: server.url });
      clients.push(client);
      await client.connect();
      return new RedisStore({ sendCommand: (...args) => client.sendCommand(args), logger: false });
    };
    stores = [await store(), await store()];
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) client.destroy();
    await server?.close();
  });

  it(
    `holds for every router and schedule tried (seed ${SEED}, ${RUNS} runs)`,
    property(() => stores),
    120_000,
  );
});

describeWithPostgres('each handler once on two receivers sharing a PostgreSQL store', () => {
  let server: Awaited<ReturnType<typeof startPostgresServer>>;
  const pools: Pool[] = [];
  let stores: [IdempotencyStore, IdempotencyStore];
  beforeAll(async () => {
    server = await startPostgresServer();
    const store = async () => {
      const pool = new Pool({ connectionString: server.url, max: 4 });
      pool.on('error', () => undefined); // an idle connection cut at shutdown is not a failure
      pools.push(pool);
      const made = new PostgresStore({ pool });
      await made.setup();
      return made;
    };
    stores = [await store(), await store()];
  }, 60_000);
  afterAll(async () => {
    for (const pool of pools) await pool.end();
    await server?.close();
  });

  it(
    `holds for every router and schedule tried (seed ${SEED}, ${RUNS} runs)`,
    property(() => stores),
    120_000,
  );
});
