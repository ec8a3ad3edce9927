import { createHash } from 'node:crypto';

/**
 * The value of a key: `d` once done, `p:<token>` while a delivery holds it. Each script touches only
 * KEYS[1], so the store works on Redis Cluster and its kin.
 */
export interface RedisScript {
  readonly name: 'claim' | 'markDone' | 'release';
  readonly source: string;
  /** SHA-1 of the source, as `SCRIPT LOAD` answers and `EVALSHA` expects. */
  readonly sha: string;
}

function script(name: RedisScript['name'], source: string): RedisScript {
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

/** 0 claimed, 1 busy, 2 done: integers read the same from every client. */
export const CLAIM = script(
  'claim',
  `if redis.call('SET', KEYS[1], 'p:' .. ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
if redis.call('GET', KEYS[1]) == 'd' then return 2 end
return 1`,
);

/** Compare-and-delete: only the token that holds the lease frees it; a done key is never freed. */
export const RELEASE = script(
  'release',
  `if redis.call('GET', KEYS[1]) == 'p:' .. ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
);

/**
 * Fenced markDone: 1 when the key was free, done, or held by this token (now done for ARGV[2] ms);
 * 0, changing nothing, when another token holds it.
 */
export const MARK_DONE = script(
  'markDone',
  `local v = redis.call('GET', KEYS[1])
if v and v ~= 'd' and v ~= 'p:' .. ARGV[1] then return 0 end
redis.call('SET', KEYS[1], 'd', 'PX', ARGV[2])
return 1`,
);

export const SCRIPTS: readonly RedisScript[] = [CLAIM, MARK_DONE, RELEASE];
