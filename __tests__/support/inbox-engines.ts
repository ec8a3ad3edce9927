import type { Inbox } from '../../lib';
import { bullmqInbox } from '../../lib/bullmq';
import { pgBossInbox } from '../../lib/pg-boss';
import { describeWithPostgres, startPostgresServer } from './postgres-server';
import { describeWithRedis, startRedisServer } from './redis-server';

/** A queue engine's server, started for a suite, that makes inboxes on it. */
export interface EngineServer {
  url: string;
  /** A new inbox on its own queue. */
  inbox(name: string): Inbox;
  /** Freezes the server (nothing answers), and lets it go on. */
  pause(): void;
  resume(): void;
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
      pause: () => server.pause(),
      resume: () => server.resume(),
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
      inbox: (name) => pgBossInbox({ connectionString: server.url, name }),
      pause: () => server.pause(),
      resume: () => server.resume(),
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
