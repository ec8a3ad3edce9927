import type { Queue } from 'bullmq';
import type { ResolvedLogger } from '../logger';
import { appendonlyWarning, infoField, maxmemoryPolicyWarning } from '../redis/durability-warnings';

interface InfoClient {
  info(section?: string): Promise<string>;
}

/**
 * Reads the server's persistence and eviction settings once (INFO, which most managed Redis allow
 * where CONFIG is not) and warns, naming the setting, when an acknowledged job could be lost.
 * A server that refuses is not asked again and says nothing.
 */
export async function checkRedisDurability(queue: Queue, log: ResolvedLogger): Promise<void> {
  let info: string;
  try {
    const backend = queue.getBackend() as unknown as { client: Promise<InfoClient> };
    info = await (await backend.client).info();
  } catch {
    return;
  }
  const aof = infoField(info, 'aof_enabled');
  const policy = infoField(info, 'maxmemory_policy');
  const aofWarning = aof === undefined ? undefined : appendonlyWarning(aof, 'bullmqInbox');
  if (aofWarning !== undefined) log.warn({ appendonly: aof === '1' ? 'yes' : 'no' }, aofWarning);
  const policyWarning = policy === undefined ? undefined : maxmemoryPolicyWarning(policy, 'bullmqInbox');
  if (policyWarning !== undefined) log.warn({ maxmemoryPolicy: policy }, policyWarning);
}
