import { Client } from 'pg';
import { createClient } from 'redis';
import {
  compileLibrary,
  runProof,
  type ChaosAction,
  type ProofFigures,
} from './support/multi-instance/run-proof';
import { describeWithPostgres, startPostgresServer, type PostgresServer } from './support/postgres-server';
import { describeWithRedis, startRedisServer, type RedisServer } from './support/redis-server';

/**
 * What broke "nothing twice, nothing lost": a line per event, then a line per log line of it: the first lines of a
 * failure are often all a reader of a long CI log gets (.ci/failures.mjs prints them at its end).
 */
function brokenPromises(figures: ProofFigures): string[] {
  const lines = [
    ...figures.ackedBeforeSuccess.map((id) => `${id}: acknowledged before its handlers succeeded`),
    ...figures.unacknowledged.map((id) => `${id}: never acknowledged`),
    ...figures.unexplained.flatMap(({ key, runs, said, logs }) => [
      `${key} ran ${runs.length}× (${runs.join(', ')}); said: ${said.join(', ') || 'nothing'}`,
      ...logs.map((entry) => {
        const [who, ms, level, , handler, reason, message] = entry as unknown[];
        return `  ${String(who)} +${String(ms)} ${String(level)} ${String(handler ?? '-')} ${String(reason ?? '-')}: ${String(message).replace('[service-webhooks] ', '')}`;
      }),
    ]),
  ];
  const explained = new Set(figures.unexplained.map(({ key }) => key));
  for (const [key, n] of figures.notExactlyOnce) if (!explained.has(key)) lines.push(`${key} ran ${n}×`);
  return lines;
}

/** "Nothing twice, nothing lost" across processes: what each proof must show, figures printed. */
function expectTheProof(figures: ProofFigures, chaos: readonly string[]): void {
  // Written as the run ends, not held by jest's console to print under the file's result: there five
  // blocks of figures came between a FAIL line and its reason, which a cut CI log then lost.
  process.stdout.write(`[multi-instance proof] ${JSON.stringify(figures)}\n`);
  // Every event acknowledged only after its success, and run exactly once (with three handlers, each
  // handler of it), but in the windows the docs state, each shown by the record of the process that
  // ran it first, never by a blanket allowance; in each, that process never saw the store record the
  // success:
  // - the SIGKILL cut it after a handler succeeded and before the store heard it (a markDone or
  //   markHandlerDone on its way, or retried in the background): the event stayed claimed until its
  //   lease ran out, then ran again elsewhere. Across a crash the promise is at least once
  //   (docs/many-instances.md): rerunAfterKill, printed above;
  // - it gave up marking the event done (markDoneGivenUp) and the event came again after its lease
  //   (docs/delivery-guarantees.md): rerunAfterGiveUp;
  // - with three handlers, it logged that a handler's success was not recorded: rerunUnrecorded.
  // Each broken promise is one line of the failure: its runs, what each process said of it and its
  // event's log lines, so the failure says why itself.
  const broken = brokenPromises(figures);
  if (broken.length > 0) {
    const { store, seed } = figures;
    throw new Error(
      `[multi-instance proof] ${store}, seed ${seed} (replay: MULTI_INSTANCE_SEED=${seed}), what broke:\n${broken.join('\n')}`,
    );
  }
  // The faults happened: otherwise the proof proved nothing.
  expect(figures.kills).toBe(1);
  expect(figures.concurrentDuplicatesSent).toBeGreaterThan(20);
  expect(figures.conflicts409).toBeGreaterThan(0);
  expect(figures.failures500).toBeGreaterThan(10);
  expect(figures.unavailable503).toBeGreaterThan(10);
  expect(figures.duplicateAcks).toBeGreaterThan(0);
  for (const name of chaos) expect(figures.chaos[name] ?? 0).toBeGreaterThan(0);
}

let library: ReturnType<typeof compileLibrary> | undefined;
const lib = () => {
  library ??= compileLibrary();
  return library.dir;
};
afterAll(() => library?.remove());
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Replay a run with MULTI_INSTANCE_SEED=<seed> (each proof prints its seed with its figures). */
const seed =
  process.env.MULTI_INSTANCE_SEED === undefined ? undefined : Number(process.env.MULTI_INSTANCE_SEED);

/** One command on a connection of its own, so a fault that cut the others cannot cut it. */
async function redisAdmin(url: string, command: string[]): Promise<void> {
  const client = createClient({ url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.sendCommand(command);
  } finally {
    client.destroy();
  }
}

/** The faults both servers take: a one-second freeze, and a restart with their data. */
function serverChaos(server: {
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
  start(): Promise<void>;
}): ChaosAction[] {
  return [
    {
      name: 'SIGSTOP 1 s',
      run: async () => {
        server.pause();
        await sleep(1_000);
        server.resume();
      },
    },
    {
      name: 'restart',
      run: async () => {
        await server.stop();
        await server.start();
      },
    },
  ];
}

function redisChaos(redis: RedisServer): ChaosAction[] {
  return [
    { name: 'connection kill', run: () => redisAdmin(redis.url, ['CLIENT', 'KILL', 'TYPE', 'normal']) },
    { name: 'SCRIPT FLUSH', run: () => redisAdmin(redis.url, ['SCRIPT', 'FLUSH']) },
    ...serverChaos(redis),
  ];
}

describe.each([
  ['redis', 1],
  ['ioredis', 1],
  // Three named handlers per event, each failing at random: checked handler by handler.
  ['redis', 3],
] as const)(
  'three receiver processes sharing one Redis through %s, %i handler(s) per event',
  (store, handlers) => {
    describeWithRedis('under chaos', () => {
      let redis: RedisServer;
      // Persistent (appendfsync always): a restart keeps every acknowledged key, as production must.
      beforeAll(async () => void (redis = await startRedisServer({ persistent: true })), 30_000);
      afterAll(() => redis?.close());

      it('run every event’s handlers successfully once, through failures, duplicates, a SIGKILL, connection kills, SIGSTOP, SCRIPT FLUSH and restarts', async () => {
        const chaos = redisChaos(redis);
        const figures = await runProof(lib(), { store, storeUrl: redis.url, chaos, handlers, seed });
        expectTheProof(
          figures,
          chaos.map((c) => c.name),
        );
      }, 240_000);
    });
  },
);

describeWithPostgres('three receiver processes sharing one PostgreSQL, under chaos', () => {
  let postgres: PostgresServer;
  beforeAll(async () => void (postgres = await startPostgresServer()), 60_000);
  afterAll(() => postgres?.close(), 30_000);

  /** A connection kill of every client backend, a freeze and a restart. */
  const postgresChaos = (): ChaosAction[] => [
    {
      name: 'connection kill',
      run: async () => {
        const admin = new Client({ connectionString: postgres.url });
        admin.on('error', () => undefined);
        await admin.connect();
        try {
          await admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'",
          );
        } finally {
          await admin.end().catch(() => undefined);
        }
      },
    },
    ...serverChaos(postgres),
  ];

  it.each([1, 3] as const)(
    'run each of %i handlers per event successfully once, through failures, duplicates, a SIGKILL, connection kills, SIGSTOP and restarts',
    async (handlers) => {
      const chaos = postgresChaos();
      const figures = await runProof(lib(), {
        store: 'postgres',
        storeUrl: postgres.url,
        chaos,
        handlers,
        seed,
      });
      expectTheProof(
        figures,
        chaos.map((c) => c.name),
      );
    },
    240_000,
  );
});
