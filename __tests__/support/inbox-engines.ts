import { Redis } from 'ioredis';
import type { Inbox } from '../../lib';
import { bullmqInbox } from '../../lib/bullmq';
import { jobIdFor } from '../../lib/inbox/queued-delivery';
import { pgBossInbox } from '../../lib/pg-boss';
import { loadPgBoss } from '../../lib/pg-boss/load-pg-boss';
import { describeWithPostgres, startPostgresServer } from './postgres-server';
import { describeWithRedis, startRedisServer } from './redis-server';

/** A queue engine's server, started for a suite, that makes inboxes on it. */
export interface EngineServer {
  url: string;
  /** A new inbox on its own queue. */
  inbox(name: string): Inbox;
  /** Makes the dead letters of these events of queue `name` read as failed at `failedAt`. */
  backdate(name: string, eventIds: readonly string[], failedAt: Date): Promise<void>;
  /** Freezes the server (nothing answers), and lets it go on. */
  pause(): void;
  resume(): void;
  /** Stops the server and starts it again on the same port, its data kept. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface InboxEngine {
  name: 'bullmq' | 'pg-boss';
  describeWith: typeof describeWithRedis;
  start(): Promise<EngineServer>;
}

export const bullmqEngine: InboxEngine = {
  name: 'bullmq',
  describeWith: describeWithRedis,
  async start() {
    const server = await startRedisServer({ persistent: true });
    return {
      url: server.url,
      inbox: (name) => bullmqInbox({ connection: server.url, name, logger: false }),
      async backdate(name, eventIds, failedAt) {
        // BullMQ keeps a failed job's time in its hash and as its score in the failed set.
        const queue = bullmqInbox({ connection: server.url, name, logger: false });
        const redis = new Redis(server.url);
        try {
          for (const d of await queue.deadLetters({ limit: 10_000 })) {
            if (!eventIds.includes(d.delivery.id)) continue;
            const id = jobIdFor(d.delivery.key);
            await redis.hset(`bull:${name}:${id}`, 'finishedOn', failedAt.getTime());
            await redis.zadd(`bull:${name}:failed`, failedAt.getTime(), id);
          }
        } finally {
          redis.disconnect();
          await queue.close();
        }
      },
      pause: () => server.pause(),
      resume: () => server.resume(),
      restart: async () => {
        await server.stop();
        await server.start();
      },
      close: () => server.close(),
    };
  },
};

export const pgBossEngine: InboxEngine = {
  name: 'pg-boss',
  describeWith: describeWithPostgres,
  async start() {
    const server = await startPostgresServer();
    return {
      url: server.url,
      inbox: (name) => pgBossInbox({ connectionString: server.url, name, logger: false }),
      async backdate(name, eventIds, failedAt) {
        const boss = new (loadPgBoss().PgBoss)({ connectionString: server.url });
        boss.on('error', () => undefined);
        await boss.start();
        try {
          await boss.getDb().executeSql(
            `UPDATE pgboss.job SET data = jsonb_set(data, '{failedAt}', to_jsonb($3::text))
              WHERE name = $1 AND data->'delivery'->>'id' = ANY($2::text[])`,
            [`${name}.dead`, eventIds, failedAt.toISOString()],
          );
        } finally {
          await boss.stop({ graceful: false, timeout: 5000 });
        }
      },
      pause: () => server.pause(),
      resume: () => server.resume(),
      restart: async () => {
        await server.stop();
        await server.start();
      },
      close: () => server.close(),
    };
  },
};

export const ENGINES: readonly InboxEngine[] = [bullmqEngine, pgBossEngine];

/** Polls `check` every 50 ms until it holds, failing after `timeoutMs` (bounded, never a sleep to order). */
export async function eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}
