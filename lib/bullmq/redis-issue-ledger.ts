import type { IssueLedger } from '../core/dispatch/issue-watch';
import type { IssueLevels } from '../inbox/issue-levels';

/** The Redis commands used here (ioredis). */
interface LedgerClient {
  set(key: string, value: string, px: 'PX', ms: number, nx: 'NX'): Promise<'OK' | null>;
  get(key: string): Promise<string | null>;
  eval(script: string, keys: number, ...args: string[]): Promise<unknown>;
}

/** Stores `ARGV[2]` only while the key still holds `ARGV[1]` (`''`: absent): a compare-and-set. */
const SWAP = `local now = redis.call('GET', KEYS[1]) or ''
if now ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

/**
 * The alert levels of BullMQ queue `name` in keys of ours beside BullMQ's (never one of its own):
 * `service-webhooks:{<prefix>:<name>}:issue-levels` (the levels, as JSON) and `…:issue-check` (held
 * `everyMs` by the worker that checks, with SET NX PX, so one worker of all checks each time). The
 * levels move by a compare-and-set in one Lua call: a check that read them before another stored
 * newer ones stores nothing and announces nothing.
 */
export function redisIssueLedger(
  client: () => Promise<LedgerClient>,
  prefix: string,
  name: string,
): IssueLedger {
  const base = `service-webhooks:{${prefix}:${name}}`;
  const levelsKey = `${base}:issue-levels`;
  const checkKey = `${base}:issue-check`;
  return {
    async step(everyMs, compute) {
      const redis = await client();
      if ((await redis.set(checkKey, String(process.pid), 'PX', everyMs, 'NX')) !== 'OK') return [];
      const before = (await redis.get(levelsKey)) ?? '';
      const stored = before === '' ? undefined : (JSON.parse(before) as IssueLevels);
      const { next, alerts } = await compute(stored);
      const swapped = await redis.eval(SWAP, 1, levelsKey, before, JSON.stringify(next));
      return swapped === 1 ? alerts : [];
    },
  };
}
