import type { IssueLedger, IssueLevels } from '../inbox/issue-watch';

/** The Redis commands used here (ioredis). */
interface LedgerClient {
  set(key: string, value: string, px: 'PX', ms: number, nx: 'NX'): Promise<'OK' | null>;
  get(key: string): Promise<string | null>;
  eval(script: string, keys: number, ...args: string[]): Promise<unknown>;
  pexpire(key: string, ms: number): Promise<number>;
}

/**
 * The most a check holds the others off: a worker killed mid-check delays the next check this long
 * at most.
 */
const CHECK_HOLD_MS = 5 * 60_000;

/** Stores `ARGV[2]` only while the key still holds `ARGV[1]` (`''`: absent): a compare-and-set. */
const SWAP = `local now = redis.call('GET', KEYS[1]) or ''
if now ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

/**
 * The alert levels of BullMQ queue `name` in keys of ours beside BullMQ's (never one of its own):
 * `service-webhooks:{<prefix>:<name>}:issue-levels` (the levels, as JSON) and `…:issue-check` (held by
 * the worker that checks, with SET NX PX, while it checks and for the rest of `everyMs`, so one
 * worker of all checks each time, however long a walk of many dead letters takes). The
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
      // Held while this check walks the dead letters (however long), then for the rest of `everyMs`.
      const started = Date.now();
      if ((await redis.set(checkKey, String(process.pid), 'PX', CHECK_HOLD_MS, 'NX')) !== 'OK') return [];
      try {
        const before = (await redis.get(levelsKey)) ?? '';
        const stored = before === '' ? undefined : (JSON.parse(before) as IssueLevels);
        const { next, alerts } = await compute(stored);
        const swapped = await redis.eval(SWAP, 1, levelsKey, before, JSON.stringify(next));
        return swapped === 1 ? alerts : [];
      } finally {
        await redis.pexpire(checkKey, Math.max(1, everyMs - (Date.now() - started)));
      }
    },
  };
}
