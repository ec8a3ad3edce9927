import { bullmqInbox } from '../bullmq/index';
import { mergeIssues, readIssues } from '../bullmq/bullmq-issues';
import { quarantineName } from '../bullmq/quarantine-queue';
import { redisIssueTally, type TallyClient } from '../bullmq/redis-issue-tally';
import { checkIssuesQuery } from '../inbox/check-dead-letter-query';
import { loadBullmq } from '../bullmq/load-bullmq';
import { redisConnection } from '../bullmq/redis-connection';
import { didYouMean } from '../did-you-mean';
import type { Inbox } from '../inbox/inbox';
import { readOnlyRefusals } from '../inbox/read-only-refusals';

/** The Redis reads used here (ioredis). */
interface KeyReader {
  exists(key: string): Promise<number>;
  scan(cursor: string, ...args: (string | number)[]): Promise<[string, string[]]>;
}

/** How many SCAN calls the search for a close queue name may make (each asks for 1000 keys). */
const SCAN_CALLS = 20;

/**
 * The BullMQ queue `name` at `url`, opened only to be read: its `Queue` skips the meta write every
 * `Queue` makes when it starts, and a queue that is not there (no `<prefix>:<name>:meta` key, which
 * every receiver's and worker's queue writes) is an error naming the closest queue there is.
 */
export function readOnlyBullmqInbox(url: string, name = 'service-webhooks'): Inbox {
  const queue = new (loadBullmq().Queue)(name, { connection: redisConnection(url), skipMetasUpdate: true });
  queue.on('error', () => undefined);
  const held = new (loadBullmq().Queue)(quarantineName(name), {
    connection: redisConnection(url),
    skipMetasUpdate: true,
  });
  held.on('error', () => undefined);
  const inbox = bullmqInbox({ queue, logger: false });
  const prefix = queue.opts.prefix ?? 'bull';
  let ready: Promise<void> | undefined;
  /** The queue's own Redis connection (BullMQ's backend, as check-redis-durability reads it). */
  const redis = () => (queue.getBackend() as unknown as { client: Promise<KeyReader> }).client;
  const tally = redis as unknown as () => Promise<TallyClient>;

  async function queueNames(): Promise<string[]> {
    const client = await redis();
    const names = new Set<string>();
    let cursor = '0';
    for (let call = 0; call < SCAN_CALLS; call++) {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*:meta`, 'COUNT', 1000);
      for (const key of keys) names.add(key.slice(prefix.length + 1, -':meta'.length));
      cursor = next;
      if (cursor === '0') break;
    }
    return [...names];
  }

  function exists(): Promise<void> {
    ready ??= (async () => {
      const client = await redis();
      if ((await client.exists(`${prefix}:${name}:meta`)) === 1) return;
      const hint = didYouMean(name, await queueNames());
      throw new Error(
        `[service-webhooks] no queue named "${name}"${hint === undefined ? '; check --name' : ` (did you mean ${hint}?)`}`,
      );
    })();
    return ready;
  }

  return {
    engine: inbox.engine,
    name,
    ...readOnlyRefusals('bullmqInbox'),
    deadLetters: async (query) => {
      await exists();
      return inbox.deadLetters(query);
    },
    // Not the inbox's own: that one keeps its issue tallies (fills them, reconciles them) as it reads.
    // The quarantine queue's letters are the inbox's too (read through its own Queue, not written).
    issues: async (query) => {
      await exists();
      const checked = checkIssuesQuery(query);
      return mergeIssues(
        await Promise.all([
          readIssues(queue, redisIssueTally(tally, prefix, name), checked),
          readIssues(held, redisIssueTally(tally, prefix, quarantineName(name)), checked),
        ]),
        checked,
      );
    },
    status: async () => {
      await exists();
      return inbox.status();
    },
    close: async () => {
      await inbox.close();
      await held.close();
      await queue.close();
    },
  };
}
