import fc from 'fast-check';
import { compileLibrary } from './support/multi-instance/run-proof';
import { OrderingRig, scenarioArbitrary, type RunFigures } from './support/multi-instance/run-ordering-proof';
import { describeWithPostgres, startPostgresServer, type PostgresServer } from './support/postgres-server';
import { describeWithRedis, startRedisServer, type RedisServer } from './support/redis-server';

// Replay a failure with PROPERTY_SEED=<seed> (and the path fast-check prints).
const SEED = Number(process.env.PROPERTY_SEED ?? Date.now() % 1_000_000);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 100);

let library: ReturnType<typeof compileLibrary> | undefined;
const lib = () => (library ??= compileLibrary()).dir;
afterAll(() => library?.remove());

/**
 * The property, through three receiver processes sharing one store: random interleavings of each
 * entity's events, redeliveries, failures and concurrent deliveries, then the Service's retries until
 * every event is acknowledged. The ledger must show each ordered handler seeing its entity's events
 * in non-decreasing (time, id) order, never one at or before an event that already succeeded, never
 * two at once, the newest exactly once; and the handler without the option every event once.
 */
async function proveOn(store: 'redis' | 'postgres', url: string): Promise<void> {
  const rig = await OrderingRig.start(lib(), store, url);
  const total: RunFigures = { events: 0, deliveries: 0, stale: 0, conflicts: 0, failures: 0 };
  const started = Date.now();
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        const figures = await rig.play(scenario, `${store}-${SEED}-${++run}`);
        for (const key of Object.keys(total) as (keyof RunFigures)[]) total[key] += figures[key];
      }),
      // Each run is real HTTP to real processes: no shrinking marathon, the seed and path replay it.
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  } finally {
    console.log(
      `[ordering proof] ${JSON.stringify({ store, seed: SEED, runs: run, ...total, seconds: (Date.now() - started) / 1000 })}`,
    );
    await rig.stop();
  }
  // The interleavings did what they are for: stale events, entity conflicts and failures happened.
  expect(total.stale).toBeGreaterThan(0);
  expect(total.conflicts).toBeGreaterThan(0);
  expect(total.failures).toBeGreaterThan(0);
}

describeWithRedis('the ordering guard across three processes on one Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => void (redis = await startRedisServer()), 30_000);
  afterAll(() => redis?.close());

  it(`holds newest-wins for every interleaving tried (seed ${SEED}, ${RUNS} runs)`, async () => {
    await proveOn('redis', redis.url);
  }, 180_000);
});

describeWithPostgres('the ordering guard across three processes on one PostgreSQL', () => {
  let postgres: PostgresServer;
  beforeAll(async () => void (postgres = await startPostgresServer()), 60_000);
  afterAll(() => postgres?.close(), 30_000);

  it(`holds newest-wins for every interleaving tried (seed ${SEED}, ${RUNS} runs)`, async () => {
    await proveOn('postgres', postgres.url);
  }, 180_000);
});
