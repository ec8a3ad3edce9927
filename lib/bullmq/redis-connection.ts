// How BullMQ reaches Redis: a URL as ioredis options, with ioredis there to make them, and the
// connection a worker is given apart from the one that adds jobs.
import type { ConnectionOptions } from 'bullmq';
import { OptionsError } from '../options-error';

/** A `redis://` or `rediss://` URL as ioredis options; anything else is passed to BullMQ as is. */
export function redisConnection(connection: ConnectionOptions | string): ConnectionOptions {
  if (typeof connection !== 'string') return connection;
  let url: URL;
  try {
    url = new URL(connection);
  } catch {
    throw new OptionsError(
      'ERR_SW_OPTION',
      'bullmqInbox',
      'connection must be a redis:// URL, ioredis options or a client',
    );
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new OptionsError(
      'ERR_SW_OPTION',
      'bullmqInbox',
      `connection URL must start redis:// or rediss:// (got ${url.protocol})`,
    );
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined;
  return {
    host: url.hostname || '127.0.0.1',
    port: url.port === '' ? 6379 : Number(url.port),
    ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
    ...(db === undefined || !Number.isSafeInteger(db) ? {} : { db }),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    // BullMQ's workers block on Redis; it asks for this on every connection it makes.
    maxRetriesPerRequest: null,
  };
}

let ioredisFound = false;

/**
 * BullMQ 6 makes its Redis connections from a URL or options with `ioredis`, which it does not
 * install (an optional peer): without it the worker would fail only at `startWorker`, and the CLI
 * at its first command. Checked when the inbox is made, with what to install.
 */
export function checkIoredis(): void {
  if (ioredisFound) return;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, checked when needed
    require('ioredis');
    ioredisFound = true;
  } catch (error) {
    throw new Error(
      "[service-webhooks] bullmqInbox: a redis:// URL or connection options need 'ioredis', which BullMQ makes its connections with but does not install: npm install ioredis",
      { cause: error },
    );
  }
}

interface RedisClient {
  options: { maxRetriesPerRequest?: number | null };
  isCluster?: boolean;
  duplicate(options?: { maxRetriesPerRequest: null }): RedisClient;
  disconnect(): void;
}

/** An ioredis client (BullMQ's own test: the methods a client has and options never do). */
export function isClient(connection: unknown): connection is RedisClient {
  return ['connect', 'disconnect', 'duplicate'].every(
    (method) => typeof (connection as Record<string, unknown> | null)?.[method] === 'function',
  );
}

/**
 * Checked at construction: a Redis Cluster client must not limit `maxRetriesPerRequest` (null),
 * which BullMQ requires of a Worker's connection (it would otherwise fail only in `startWorker`).
 */
export function checkWorkerConnection(connection: ConnectionOptions): void {
  if (!isClient(connection) || connection.isCluster !== true) return;
  const redisOptions = (connection.options as { redisOptions?: RedisClient['options'] }).redisOptions;
  if (typeof redisOptions?.maxRetriesPerRequest === 'number')
    throw new OptionsError(
      'ERR_SW_OPTION',
      'bullmqInbox',
      'a Redis Cluster connection must be made with redisOptions: { maxRetriesPerRequest: null } (BullMQ workers wait on Redis without a retry limit)',
    );
}

/**
 * The connection a Worker is given: BullMQ requires `maxRetriesPerRequest: null` there, but
 * recommends a limit on the connection that adds jobs, so an enqueue fails fast when Redis is away.
 * A client of yours without it is duplicated with it (released when the worker closes); ioredis
 * options get it set. Nothing of yours is changed.
 */
export function workerConnection(connection: ConnectionOptions): {
  connection: ConnectionOptions;
  release(): void;
} {
  if (!isClient(connection))
    return { connection: { ...connection, maxRetriesPerRequest: null }, release: () => undefined };
  if (connection.isCluster === true || connection.options.maxRetriesPerRequest === null)
    return { connection, release: () => undefined };
  const duplicate = connection.duplicate({ maxRetriesPerRequest: null });
  return { connection: duplicate as unknown as ConnectionOptions, release: () => duplicate.disconnect() };
}
