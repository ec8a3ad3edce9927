import { createHash } from 'node:crypto';

/**
 * The value of a key: `d` once done, `p:<token>` while a delivery holds it, and
 * `h:<lease end>:<token>` then one `\n<name>` per handler that succeeded, once one has or a run
 * failed (the lease's end in server milliseconds, the token empty when free; the key then lives as
 * long as the event, past its lease). A line `\n\x01<n>` counts the failed runs (a name has no
 * control character, so it is never read as one; a value without it, as the previous version wrote,
 * counts none). Each script touches only KEYS[1], so the store works on Redis Cluster and its kin.
 */
export interface RedisScript {
  readonly name:
    | 'claim'
    | 'claimHandlers'
    | 'markHandlerDone'
    | 'markDone'
    | 'release'
    | 'renewLease'
    | 'leaseEntity'
    | 'advanceEntity'
    | 'releaseEntity'
    | 'renewEntity';
  readonly source: string;
  /** SHA-1 of the source, as `SCRIPT LOAD` answers and `EVALSHA` expects. */
  readonly sha: string;
}

function script(name: RedisScript['name'], source: string): RedisScript {
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * Reading and writing an `h:` value. TIME (server milliseconds, so instances' clocks never disagree)
 * comes before any write: Redis before 5 replicates scripts verbatim and refuses a write after it
 * unless told to replicate effects. `put` keeps the key at least `ms` more, never less than it had.
 */
const HELD = `local function now_ms()
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function held(v)
  local e, tok, rest = string.match(v, '^h:(%d+):([^\\n]*)(.*)$')
  return tonumber(e), tok, rest
end
local function put(e, tok, rest, ms)
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < ms then ttl = ms end
  redis.call('SET', KEYS[1], 'h:' .. string.format('%.0f', e) .. ':' .. tok .. rest, 'PX', ttl)
end
local function lines(rest)
  local names, runs = {}, 0
  for n in string.gmatch(rest, '\\n([^\\n]*)') do
    if string.byte(n, 1) == 1 then runs = tonumber(string.sub(n, 2)) or 0 else names[#names + 1] = n end
  end
  return names, runs
end
`;

/** The claim of both claim scripts: a new key is one SET, as before any handler was recorded. */
const claimThen = (claimed: string, busy: string, done: string, taken: string) => `${HELD}
if redis.call('SET', KEYS[1], 'p:' .. ARGV[1], 'NX', 'PX', ARGV[2]) then return ${claimed} end
local v = redis.call('GET', KEYS[1])
if v == 'd' then return ${done} end
if string.sub(v, 1, 2) ~= 'h:' then return ${busy} end
local now = now_ms()
local e, tok, rest = held(v)
if tok ~= '' and e > now then return ${busy} end
put(now + tonumber(ARGV[2]), ARGV[1], rest, tonumber(ARGV[2]))
${taken}`;

/** 0 claimed, 1 busy, 2 done: integers read the same from every client. */
export const CLAIM = script('claim', claimThen('0', '1', '2', 'return 0'));

/**
 * As CLAIM, each answer a list: `{0, attempt, names of the handlers that succeeded...}` (attempt 1
 * plus the failed runs counted), `{1}`, `{2}`.
 */
export const CLAIM_HANDLERS = script(
  'claimHandlers',
  claimThen(
    '{0, 1}',
    '{1}',
    '{2}',
    `local names, runs = lines(rest)
local out = {0, runs + 1}
for _, n in ipairs(names) do out[#out + 1] = n end
return out`,
  ),
);

/**
 * ARGV token, handler, retention ms: 1 when the token holds a live lease (the name is now recorded,
 * once, and the key kept at least the retention), else 0, changing nothing.
 */
export const MARK_HANDLER_DONE = script(
  'markHandlerDone',
  `${HELD}local v = redis.call('GET', KEYS[1])
if not v then return 0 end
if v == 'p:' .. ARGV[1] then
  local now = now_ms()
  put(now + redis.call('PTTL', KEYS[1]), ARGV[1], '\\n' .. ARGV[2], tonumber(ARGV[3]))
  return 1
end
if string.sub(v, 1, 2) ~= 'h:' then return 0 end
local now = now_ms()
local e, tok, rest = held(v)
if tok ~= ARGV[1] or e <= now then return 0 end
for n in string.gmatch(rest, '\\n([^\\n]*)') do
  if n == ARGV[2] then
    put(e, tok, rest, tonumber(ARGV[3]))
    return 1
  end
end
put(e, tok, rest .. '\\n' .. ARGV[2], tonumber(ARGV[3]))
return 1`,
);

/**
 * Compare-and-delete: only the token that holds the lease frees it; a done key is never freed,
 * recorded handlers stay. With ARGV[2] (retention ms) the run failed: it is counted, and the key
 * kept at least that long.
 */
export const RELEASE = script(
  'release',
  `${HELD}local v = redis.call('GET', KEYS[1])
if v == 'p:' .. ARGV[1] then
  if not ARGV[2] then return redis.call('DEL', KEYS[1]) end
  put(0, '', '\\n\\1' .. 1, tonumber(ARGV[2]))
  return 1
end
if v and string.sub(v, 1, 2) == 'h:' then
  local e, tok, rest = held(v)
  if tok == ARGV[1] then
    if not ARGV[2] then
      put(0, '', rest, 0)
      return 1
    end
    local names, runs = lines(rest)
    rest = '\\n\\1' .. (runs + 1)
    for _, n in ipairs(names) do rest = rest .. '\\n' .. n end
    put(0, '', rest, tonumber(ARGV[2]))
    return 1
  end
end
return 0`,
);

/** Fenced renewal: 1 when this token holds the key (its lease now ends ARGV[2] ms from now), else 0. */
export const RENEW_LEASE = script(
  'renewLease',
  `${HELD}local v = redis.call('GET', KEYS[1])
if v == 'p:' .. ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if v and string.sub(v, 1, 2) == 'h:' then
  local now = now_ms()
  local e, tok, rest = held(v)
  if tok == ARGV[1] and e > now then
    put(now + tonumber(ARGV[2]), tok, rest, tonumber(ARGV[2]))
    return 1
  end
end
return 0`,
);

/**
 * Fenced markDone: 1 when the key was free, done, or held by this token (now done for ARGV[2] ms);
 * 0, changing nothing, when another token holds it.
 */
export const MARK_DONE = script(
  'markDone',
  `${HELD}local v = redis.call('GET', KEYS[1])
if v and v ~= 'd' and v ~= 'p:' .. ARGV[1] then
  if string.sub(v, 1, 2) ~= 'h:' then return 0 end
  local e, tok = held(v)
  if tok ~= ARGV[1] and tok ~= '' and e > now_ms() then return 0 end
end
redis.call('SET', KEYS[1], 'd', 'PX', ARGV[2])
return 1`,
);

/**
 * An entity is a hash: `t` the lease's token and `u` its end (server milliseconds, from TIME, so
 * instances' clocks never disagree), `m` the newest processed position (`<time digits>|<event id>`).
 * Positions compare byte by byte, as PostgreSQL's "C" collation does: Lua's `<` follows the server's
 * locale.
 */
const BEFORE = `local function before(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local function keep(ms)
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < ms then redis.call('PEXPIRE', KEYS[1], ms) end
end
`;

/** ARGV token, lease ms, position → 0 leased, 1 stale, 2 busy. */
export const LEASE_ENTITY = script(
  'leaseEntity',
  `${BEFORE}local h = redis.call('HMGET', KEYS[1], 't', 'u', 'm')
if h[3] and not before(h[3], ARGV[3]) then return 1 end
-- Redis before 5 replicates scripts verbatim and refuses a write after TIME unless told to
-- replicate effects (the default from Redis 5; a no-op since 7).
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if h[1] and tonumber(h[2]) > now then return 2 end
local lease = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 't', ARGV[1], 'u', string.format('%.0f', now + lease))
keep(lease)
return 0`,
);

/**
 * ARGV token, position, retention ms: raises the position (never lowers it), frees the lease if the
 * token holds it and keeps the entity that long → 1; 0 when another token holds it (then its lease
 * is kept too).
 */
export const ADVANCE_ENTITY = script(
  'advanceEntity',
  `${BEFORE}local h = redis.call('HMGET', KEYS[1], 't', 'm')
if not h[2] or before(h[2], ARGV[2]) then redis.call('HSET', KEYS[1], 'm', ARGV[2]) end
if h[1] and h[1] ~= ARGV[1] then
  keep(tonumber(ARGV[3]))
  return 0
end
redis.call('HDEL', KEYS[1], 't', 'u')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`,
);

/** ARGV token, lease ms → 1 when the token holds an unexpired lease (now ending ARGV[2] ms from now), else 0. */
export const RENEW_ENTITY = script(
  'renewEntity',
  `${BEFORE}local h = redis.call('HMGET', KEYS[1], 't', 'u')
if h[1] ~= ARGV[1] then return 0 end
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if tonumber(h[2]) <= now then return 0 end
local lease = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'u', string.format('%.0f', now + lease))
keep(lease)
return 1`,
);

/** ARGV token: frees the lease only for its token; an entity with no position left goes. */
export const RELEASE_ENTITY = script(
  'releaseEntity',
  `if redis.call('HGET', KEYS[1], 't') ~= ARGV[1] then return 0 end
if redis.call('HEXISTS', KEYS[1], 'm') == 1 then return redis.call('HDEL', KEYS[1], 't', 'u') end
return redis.call('DEL', KEYS[1])`,
);

export const SCRIPTS: readonly RedisScript[] = [CLAIM, MARK_DONE, RELEASE];
/** Loaded by the first event of several handlers: a receiver whose events run one loads none. */
export const HANDLER_SCRIPTS: readonly RedisScript[] = [CLAIM_HANDLERS, MARK_HANDLER_DONE];
/** Loaded by the first renewal: only an inbox's worker renews, so a receiver never loads it. */
export const RENEW_SCRIPTS: readonly RedisScript[] = [RENEW_LEASE, RENEW_ENTITY];
export const ENTITY_SCRIPTS: readonly RedisScript[] = [LEASE_ENTITY, ADVANCE_ENTITY, RELEASE_ENTITY];
