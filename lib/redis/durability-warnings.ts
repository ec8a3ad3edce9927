/**
 * What to tell an operator whose Redis can lose what it acknowledged: one sentence per setting, each
 * naming it and what to set. Shared by `RedisStore` and the BullMQ inbox.
 */
export function maxmemoryPolicyWarning(policy: string, what: string): string | undefined {
  if (policy === 'noeviction') return undefined;
  return `${what}: the server's maxmemory-policy is ${policy}, which can evict ${what === 'RedisStore' ? 'the keys that remember processed events (each has a TTL), and an evicted event runs again' : 'queued events, and an evicted event is lost'}. Set maxmemory-policy noeviction, or give it a Redis of its own`;
}

export function appendonlyWarning(appendonly: string, what: string): string | undefined {
  if (appendonly === 'yes' || appendonly === '1') return undefined;
  return `${what}: the server's appendonly is ${appendonly === '0' ? 'no' : appendonly}: an acknowledged event lives only in memory (and the last snapshot) until the next save, and a crash of Redis loses it. Set appendonly yes (appendfsync everysec or always)`;
}

/** Reads `name: value` lines out of an `INFO` reply. */
export function infoField(info: string, name: string): string | undefined {
  const match = new RegExp(`^${name}:(.*)$`, 'm').exec(info);
  return match?.[1]?.trim();
}
