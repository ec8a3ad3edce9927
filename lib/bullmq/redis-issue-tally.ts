import { SAMPLES, type InboxIssue, type IssueRef } from '../inbox/inbox-issue';

/** The Redis commands used here (ioredis). */
export interface TallyClient {
  eval(script: string, keys: number, ...args: (string | number)[]): Promise<unknown>;
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<unknown>;
  zrange(key: string, start: number, stop: number, withScores: 'WITHSCORES'): Promise<string[]>;
  zrevrange(key: string, start: number, stop: number, withScores: 'WITHSCORES'): Promise<string[]>;
  zmscore(key: string, ...members: string[]): Promise<(string | null)[]>;
}

// Every script takes KEYS: the dead letters tallied (a sorted set of job ids by failure time), each
// one's issues (a hash: job id -> {e: event id, k: issue keys}), the issues (a sorted set of keys by
// their newest failure) and each issue's fields (a hash: key -> JSON); ARGV[1] is the prefix of the
// per-issue sorted sets (`…:issue:<key>`, job ids by failure time). All share one hash tag, so one
// slot: a script may touch them all on a Redis Cluster.
const UNLINK = `local function unlink(id)
  local old = redis.call('HGET', KEYS[2], id)
  if not old then return end
  for _, k in ipairs(cjson.decode(old).k) do
    local set = ARGV[1] .. k
    redis.call('ZREM', set, id)
    local last = redis.call('ZRANGE', set, -1, -1, 'WITHSCORES')
    if #last == 0 then
      redis.call('ZREM', KEYS[3], k)
      redis.call('HDEL', KEYS[4], k)
    else
      redis.call('ZADD', KEYS[3], last[2], k)
    end
  end
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[1], id)
end
`;

/** ARGV: set prefix, job id, failed at, event id, then (issue key, issue JSON) per issue. */
const RECORD = `${UNLINK}
local id, at = ARGV[2], tonumber(ARGV[3])
unlink(id)
local keys = {}
for i = 5, #ARGV, 2 do
  local k = ARGV[i]
  keys[#keys + 1] = k
  redis.call('ZADD', ARGV[1] .. k, ARGV[3], id)
  redis.call('HSETNX', KEYS[4], k, ARGV[i + 1])
  local newest = tonumber(redis.call('ZSCORE', KEYS[3], k))
  if newest == nil or at > newest then redis.call('ZADD', KEYS[3], ARGV[3], k) end
end
redis.call('ZADD', KEYS[1], ARGV[3], id)
redis.call('HSET', KEYS[2], id, cjson.encode({e = ARGV[4], k = keys}))
return 1`;

/** ARGV: set prefix, then per job its id and the failure time it must still hold ('' for any). */
const REMOVE = `${UNLINK}
local removed = 0
for i = 2, #ARGV, 2 do
  local at = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if at and (ARGV[i + 1] == '' or tonumber(at) == tonumber(ARGV[i + 1])) then
    unlink(ARGV[i])
    removed = removed + 1
  end
end
return removed`;

// One row per issue key: its fields, count, first and last failure, and newest sample event ids.
const ROW = `local function row(k, samples)
  local set = ARGV[1] .. k
  local first = redis.call('ZRANGE', set, 0, 0, 'WITHSCORES')
  local last = redis.call('ZRANGE', set, -1, -1, 'WITHSCORES')
  local events = {}
  for _, id in ipairs(redis.call('ZREVRANGE', set, 0, samples - 1)) do
    local refs = redis.call('HGET', KEYS[2], id)
    if refs then events[#events + 1] = cjson.decode(refs).e end
  end
  return {k, redis.call('HGET', KEYS[4], k) or '{}', redis.call('ZCARD', set),
    first[2] or '0', last[2] or '0', cjson.encode(events)}
end
`;

/** ARGV: set prefix, since (ms or '-inf'), limit, samples. One row per issue, newest first. */
const READ = `${ROW}
local rows = {}
for _, k in ipairs(redis.call('ZREVRANGEBYSCORE', KEYS[3], '+inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))) do
  rows[#rows + 1] = row(k, tonumber(ARGV[4]))
end
return rows`;

/** ARGV: set prefix, samples, then issue keys: a row for each one tallied. */
const PICK = `${ROW}
local rows = {}
for i = 3, #ARGV do
  if redis.call('ZSCORE', KEYS[3], ARGV[i]) then rows[#rows + 1] = row(ARGV[i], tonumber(ARGV[2])) end
end
return rows`;

/** A row of READ or PICK. */
type IssueRow = [key: string, fields: string, count: number, first: string, last: string, events: string];

function issueOf([key, fields, count, first, last, events]: IssueRow): InboxIssue {
  const { type, handler, error } = JSON.parse(fields) as IssueFields;
  // cjson writes an empty list as {}.
  const samples: unknown = JSON.parse(events);
  return {
    key,
    type,
    handler,
    error,
    count,
    firstSeen: new Date(Number(first)),
    lastSeen: new Date(Number(last)),
    sampleEventIds: Array.isArray(samples) ? (samples as string[]) : [],
  };
}

/** The fields of an issue that every dead letter of it shares. */
type IssueFields = Pick<InboxIssue, 'type' | 'handler' | 'error'>;

/** BullMQ's dead letters counted by issue in keys of ours, kept as they come and go. */
export interface IssueTallyStore {
  /** Counts job `id` (failed at `failedAt`, ms) in `refs`' issues, in place of what it counted in before. */
  record(
    id: string,
    failedAt: number,
    eventId: string,
    type: string,
    refs: readonly IssueRef[],
  ): Promise<void>;
  /**
   * Stops counting each job (by id), only while it is still tallied as failed at the time given
   * with it; resolves how many it stopped counting.
   */
  remove(jobs: readonly (readonly [id: string, failedAt: number | undefined])[]): Promise<number>;
  /** The issues, newest failure first: cost in issues read, not in dead letters. */
  read(query: { since?: Date | undefined; limit: number }): Promise<InboxIssue[]>;
  /** The issues of these keys that are tallied, in no order: cost in keys given. */
  pick(keys: readonly string[]): Promise<InboxIssue[]>;
  /** Whether every dead letter of the queue has been tallied once (set after the first walk). */
  complete(): Promise<boolean>;
  markComplete(): Promise<void>;
  /** Which of `ids` are not tallied. */
  untallied(ids: readonly string[]): Promise<string[]>;
  /** Tallied job ids with their failure times, oldest first, by position. */
  range(start: number, stop: number): Promise<[id: string, failedAt: number][]>;
  /** The job ids tallied in issue `key` with their failure times, newest first, by position. */
  issueRange(key: string, start: number, stop: number): Promise<[id: string, failedAt: number][]>;
  /** Where the reconcile left off (its two positions), kept between calls and processes. */
  cursor(): Promise<{ failed: number; tallied: number }>;
  setCursor(cursor: { failed: number; tallied: number }): Promise<void>;
}

/**
 * The issue tally of BullMQ queue `name` in keys of ours beside BullMQ's (never one of its own):
 * `service-webhooks:{<prefix>:<name>}:tally-…`. Every change is one Lua call, so a dead letter is
 * counted in all its issues or in none, and a reader never sees it half moved.
 */
export function redisIssueTally(
  client: () => Promise<TallyClient>,
  prefix: string,
  name: string,
): IssueTallyStore {
  const base = `service-webhooks:{${prefix}:${name}}:tally`;
  const keys = [`${base}-dead`, `${base}-refs`, `${base}-issues`, `${base}-fields`] as const;
  const sets = `${base}-issue:`;
  const run = async (script: string, ...args: (string | number)[]) =>
    (await client()).eval(script, keys.length, ...keys, sets, ...args);
  return {
    async record(id, failedAt, eventId, type, refs) {
      const pairs = refs.flatMap((r) => [
        r.key,
        JSON.stringify({ type, handler: r.handler, error: r.error } satisfies IssueFields),
      ]);
      await run(RECORD, id, failedAt, eventId, ...pairs);
    },
    async remove(jobs) {
      if (jobs.length === 0) return 0;
      return Number(await run(REMOVE, ...jobs.flatMap(([id, at]) => [id, at ?? ''])));
    },
    async read({ since, limit }) {
      const rows = (await run(
        READ,
        since === undefined ? '-inf' : since.getTime(),
        limit,
        SAMPLES,
      )) as IssueRow[];
      return rows
        .map(issueOf)
        .sort((a, b) => b.lastSeen.getTime() - a.lastSeen.getTime() || (a.key < b.key ? -1 : 1));
    },
    async pick(issueKeys) {
      if (issueKeys.length === 0) return [];
      return ((await run(PICK, SAMPLES, ...issueKeys)) as IssueRow[]).map(issueOf);
    },
    async complete() {
      return (await (await client()).get(`${base}-complete`)) !== null;
    },
    async markComplete() {
      await (await client()).set(`${base}-complete`, '1');
    },
    async untallied(ids) {
      if (ids.length === 0) return [];
      const scores = await (await client()).zmscore(keys[0], ...ids);
      return ids.filter((_, i) => scores[i] === null);
    },
    async range(start, stop) {
      return pairsOf(await (await client()).zrange(keys[0], start, stop, 'WITHSCORES'));
    },
    async issueRange(key, start, stop) {
      return pairsOf(await (await client()).zrevrange(`${sets}${key}`, start, stop, 'WITHSCORES'));
    },
    async cursor() {
      const [failed, tallied] = ((await (await client()).get(`${base}-cursor`)) ?? '0 0')
        .split(' ')
        .map(Number);
      return { failed: failed || 0, tallied: tallied || 0 };
    },
    async setCursor({ failed, tallied }) {
      await (await client()).set(`${base}-cursor`, `${failed} ${tallied}`);
    },
  };
}

/** A sorted set's members and scores as Redis gives them (flat), in pairs. */
function pairsOf(flat: readonly string[]): [string, number][] {
  const pairs: [string, number][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i]!, Number(flat[i + 1])]);
  return pairs;
}
