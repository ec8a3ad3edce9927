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
