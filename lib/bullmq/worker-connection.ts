import type { ConnectionOptions } from 'bullmq';
import { OptionsError } from '../options-error';

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
