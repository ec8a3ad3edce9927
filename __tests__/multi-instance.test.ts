import { compileLibrary, runProof, type ProofFigures } from './support/multi-instance/run-proof';
import { describeWithPostgres, startPostgresServer, type PostgresServer } from './support/postgres-server';
import { describeWithRedis, startRedisServer, type RedisServer } from './support/redis-server';

/** "Nothing twice, nothing lost" across processes: what each proof must show, figures printed. */
function expectTheProof(figures: ProofFigures): void {
  console.log(`[multi-instance proof] ${JSON.stringify(figures)}`);
  expect({
    notExactlyOnce: figures.notExactlyOnce,
    ackedBeforeSuccess: figures.ackedBeforeSuccess,
    unacknowledged: figures.unacknowledged,
  }).toEqual({ notExactlyOnce: [], ackedBeforeSuccess: [], unacknowledged: [] });
  // The faults happened: otherwise the proof proved nothing.
  expect(figures.kills).toBe(1);
  expect(figures.concurrentDuplicatesSent).toBeGreaterThan(20);
  expect(figures.conflicts409).toBeGreaterThan(0);
  expect(figures.failures500).toBeGreaterThan(10);
  expect(figures.unavailable503).toBeGreaterThan(10);
  expect(figures.duplicateAcks).toBeGreaterThan(0);
}

let library: ReturnType<typeof compileLibrary> | undefined;
const lib = () => {
  library ??= compileLibrary();
  return library.dir;
};
afterAll(() => library?.remove());

describeWithRedis('three receiver processes sharing one Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => void (redis = await startRedisServer()), 30_000);
  afterAll(() => redis?.close());

  it('run every event’s handlers successfully exactly once, through failures, timeouts, duplicates and a SIGKILL', async () => {
    expectTheProof(await runProof(lib(), { store: 'redis', storeUrl: redis.url }));
  }, 240_000);
});

describeWithPostgres('three receiver processes sharing one PostgreSQL', () => {
  let postgres: PostgresServer;
  beforeAll(async () => void (postgres = await startPostgresServer()), 60_000);
  afterAll(() => postgres?.close(), 30_000);

  it('run every event’s handlers successfully exactly once, through failures, timeouts, duplicates and a SIGKILL', async () => {
    expectTheProof(await runProof(lib(), { store: 'postgres', storeUrl: postgres.url }));
  }, 240_000);
});
