import { Redis } from 'ioredis';
import { Pool } from 'pg';
import type { IdempotencyStore } from '../../lib';
import { normalizeEvent } from '../../lib/events/normalize-event';
import { idempotencyKey } from '../../lib/idempotency/store-keys';
import { queuedDelivery, type QueuedDelivery } from '../../lib/inbox/queued-delivery';
import { PostgresStore } from '../../lib/postgres';
import { RedisStore } from '../../lib/redis';
import { buildEvent } from '../../lib/testing';
import type { EngineServer, InboxEngine } from './inbox-engines';

/** An `ag.access_pass.issued` event of id `id`, as the receiver queues it (scope ''). */
export function queuedIssued(id: string): QueuedDelivery {
  const envelope = buildEvent('ag.access_pass.issued', {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

/**
 * The shared store an engine's users have at hand, on the engine's own server: Redis beside BullMQ,
 * PostgreSQL (in `table`) beside pg-boss. `close` closes its client.
 */
export async function sharedStore(
  engine: InboxEngine,
  server: EngineServer,
  table: string,
): Promise<{ store: IdempotencyStore; close: () => Promise<void> }> {
  if (engine.name === 'bullmq') {
    const redis = new Redis(server.url);
    const store = new RedisStore({ sendCommand: (command, ...args) => redis.call(command, ...args) });
    return { store, close: async () => void redis.disconnect() };
  }
  const pool = new Pool({ connectionString: server.url });
  pool.on('error', () => undefined); // an idle connection cut at shutdown is not a failure
  const store = new PostgresStore({ pool, table });
  await store.setup();
  return { store, close: () => pool.end() };
}
