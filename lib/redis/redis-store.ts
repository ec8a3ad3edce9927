import { maxmemoryPolicyWarning } from './durability-warnings';
import type {
  ClaimResult,
  HandlersClaim,
  IdempotencyStore,
  KeyState,
} from '../idempotency/idempotency-store';
import { resolveLogger, type Logger, type ResolvedLogger } from '../logger';
import { fastStringPrototype } from '../fast-string-prototype';
import type {
  EntityLeaseResult,
  EntityOrderingStore,
  EntityPosition,
} from '../idempotency/entity-ordering-store';
import {
  ADVANCE_ENTITY,
  CLAIM,
  CLAIM_HANDLERS,
  HANDLER_SCRIPTS,
  LEASE_ENTITY,
  MARK_HANDLER_DONE,
  MARK_DONE,
  RELEASE,
  RELEASE_ENTITY,
  RENEW_ENTITY,
  RENEW_LEASE,
  RENEW_SCRIPTS,
  ENTITY_SCRIPTS,
  SCRIPTS,
  type RedisScript,
} from './redis-scripts';
import { storeAnswer, unexpectedAnswer } from '../idempotency/store-answer';
import { storedKey, storedPosition } from '../idempotency/store-keys';
import { checkStoreOptions, storeOptionsError } from '../idempotency/store-options';

/**
 * Sends one Redis command, given as its words, and resolves with the reply. Written over the client
 * the app already has: node-redis `(...args) => client.sendCommand(args)`, ioredis
 * `(command, ...args) => client.call(command, ...args)`, valkey-glide
 * `(...args) => client.customCommand(args)`.
 */
export type SendCommand = (...args: string[]) => unknown;

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /** Sends a command over your client; see {@link SendCommand}. Required. */
  sendCommand: SendCommand;
  /** Put before every key, so the store's keys are easy to find and never meet the app's. Defaults to `'service-webhooks:'`. */
  prefix?: string;
  /**
   * Where the store warns about the server's settings (a `maxmemory-policy` that can evict the
   * ledger). Defaults to the console; `false` for silence.
   */
  logger?: Logger | false;
}

const KNOWN_KEYS = ['sendCommand', 'prefix', 'logger'] as const;
const CLAIM_RESULTS: readonly ClaimResult[] = ['claimed', 'busy', 'done'];
const LEASE_RESULTS: readonly EntityLeaseResult[] = ['leased', 'stale', 'busy'];
/** markDone and advanceEntity: 0 another token holds the key, 1 applied. */
const APPLIED: readonly boolean[] = [false, true];
/** Entity keys live under their own word: an event key starts with a digit or `#`, never with it. */
const ENTITY = 'entity:';

/** Milliseconds as Redis's `PX` wants them: a whole number of at least 1. */
const px = (ms: number) => String(Math.max(1, Math.ceil(ms)));

/**
 * An {@link IdempotencyStore} on Redis (or Valkey, or any server speaking its commands), shared by
 * every instance of the receiver: "nothing twice" then holds across instances and restarts. Each
 * method is one atomic step on one key: `claim`, `markDone` and `release` are Lua scripts (fenced by
 * the lease's token), loaded once with `SCRIPT LOAD` and run with `EVALSHA` (with `EVAL` when the
 * server lost them, after a restart or a failover). The store keeps no connection of its own and no
 * timer. Once, where `CONFIG GET` is allowed, it reads `maxmemory-policy` and warns when the server
 * may evict its keys.
 */
export class RedisStore implements IdempotencyStore, EntityOrderingStore {
  readonly #send: SendCommand;
  readonly #prefix: string;
  readonly #log: ResolvedLogger;
  /** Per group of scripts: the entity ones are loaded only by a store that orders events. */
  readonly #loaded = new Map<readonly RedisScript[], Promise<void>>();
  #policyChecked = false;

  constructor(options: RedisStoreOptions) {
    checkStoreOptions(
      options,
      KNOWN_KEYS,
      'RedisStore',
      'takes an options object: new RedisStore({ sendCommand })',
    );
    const { sendCommand, prefix = 'service-webhooks:' } = options;
    if (typeof sendCommand !== 'function') {
      throw storeOptionsError(
        'RedisStore',
        'sendCommand must be a function that sends one command to Redis, e.g. (...args) => client.sendCommand(args) for node-redis',
      );
    }
    if (typeof prefix !== 'string' || prefix.length > 200) {
      throw storeOptionsError('RedisStore', 'prefix must be a string of at most 200 characters');
    }
    this.#send = sendCommand;
    this.#prefix = prefix;
    this.#log = resolveLogger(options.logger, 'RedisStore');
    // An ioredis client, made before its store, has left String.prototype slow for the process.
    fastStringPrototype();
  }

  async claim(key: string, token: string, leaseMs: number): Promise<ClaimResult> {
    return storeAnswer(
      'RedisStore',
      'claim',
      await this.#run(CLAIM, this.#key(key), token, px(leaseMs)),
      CLAIM_RESULTS,
    );
  }

  async claimHandlers(key: string, token: string, leaseMs: number): Promise<HandlersClaim> {
    const answer = await this.#run(CLAIM_HANDLERS, this.#key(key), token, px(leaseMs));
    const [code, attempt, ...names] = Array.isArray(answer) ? (answer as unknown[]) : [answer];
    const result = storeAnswer('RedisStore', 'claimHandlers', code, CLAIM_RESULTS);
    if (result !== 'claimed') return { result, succeeded: [] };
    const counted = Number(attempt);
    if (!Number.isSafeInteger(counted) || counted < 1)
      throw unexpectedAnswer('RedisStore', 'claimHandlers', answer);
    return { result, succeeded: names.map(String), attempt: counted };
  }

  async markHandlerDone(key: string, token: string, handler: string, retentionMs: number): Promise<boolean> {
    const answer = await this.#run(MARK_HANDLER_DONE, this.#key(key), token, handler, px(retentionMs));
    return storeAnswer('RedisStore', 'markHandlerDone', answer, APPLIED);
  }

  async markDone(key: string, token: string, retentionMs: number): Promise<boolean> {
    const answer = await this.#run(MARK_DONE, this.#key(key), token, px(retentionMs));
    return storeAnswer('RedisStore', 'markDone', answer, APPLIED);
  }

  async renewLease(key: string, token: string, leaseMs: number): Promise<boolean> {
    const answer = await this.#run(RENEW_LEASE, this.#key(key), token, px(leaseMs));
    return storeAnswer('RedisStore', 'renewLease', answer, APPLIED);
  }

  async release(key: string, token: string, retentionMs?: number): Promise<void> {
    if (retentionMs === undefined) await this.#run(RELEASE, this.#key(key), token);
    else await this.#run(RELEASE, this.#key(key), token, px(retentionMs));
  }

  async leaseEntity(
    key: string,
    token: string,
    leaseMs: number,
    position: EntityPosition,
  ): Promise<EntityLeaseResult> {
    const answer = await this.#run(
      LEASE_ENTITY,
      this.#entityKey(key),
      token,
      px(leaseMs),
      storedPosition(position),
    );
    return storeAnswer('RedisStore', 'leaseEntity', answer, LEASE_RESULTS);
  }

  async advanceEntity(
    key: string,
    token: string,
    position: EntityPosition,
    retentionMs: number,
  ): Promise<boolean> {
    const answer = await this.#run(
      ADVANCE_ENTITY,
      this.#entityKey(key),
      token,
      storedPosition(position),
      px(retentionMs),
    );
    return storeAnswer('RedisStore', 'advanceEntity', answer, APPLIED);
  }

  async renewEntity(key: string, token: string, leaseMs: number): Promise<boolean> {
    const answer = await this.#run(RENEW_ENTITY, this.#entityKey(key), token, px(leaseMs));
    return storeAnswer('RedisStore', 'renewEntity', answer, APPLIED);
  }

  async releaseEntity(key: string, token: string): Promise<void> {
    await this.#run(RELEASE_ENTITY, this.#entityKey(key), token);
  }

  async get(key: string): Promise<KeyState | null> {
    const value: unknown = await this.#call('get', 'GET', this.#key(key));
    if (value === null || value === undefined) return null;
    const text = String(value);
    if (text === 'd') return 'done';
    if (text.startsWith('p:')) return 'processing';
    const held = /^h:(\d+):([^\n]*)/.exec(text);
    if (held === null) throw unexpectedAnswer('RedisStore', 'get', text);
    // Recorded handlers, the lease free or running out: read on the server's clock, as the scripts do.
    if (held[2] === '') return null;
    const time = await this.#call('get', 'TIME');
    const [seconds, micros] = Array.isArray(time) ? time.map(Number) : [Number.NaN, 0];
    const now = (seconds as number) * 1000 + Math.floor((micros as number) / 1000);
    if (!Number.isFinite(now)) throw unexpectedAnswer('RedisStore', 'get', time);
    return Number(held[1]) > now ? 'processing' : null;
  }

  #key(key: string): string {
    return this.#prefix + storedKey(key);
  }

  /** `entity:` stays outside the stored (maybe hashed) part, so the two kinds of keys never meet. */
  #entityKey(key: string): string {
    return this.#prefix + ENTITY + storedKey(key);
  }

  async #run(script: RedisScript, redisKey: string, ...args: string[]): Promise<unknown> {
    await this.#load(
      ENTITY_SCRIPTS.includes(script)
        ? ENTITY_SCRIPTS
        : RENEW_SCRIPTS.includes(script)
          ? RENEW_SCRIPTS
          : HANDLER_SCRIPTS.includes(script)
            ? HANDLER_SCRIPTS
            : SCRIPTS,
    );
    const words = ['1', redisKey, ...args];
    try {
      return await this.#send('EVALSHA', script.sha, ...words);
    } catch (error) {
      if (!String((error as Error | undefined)?.message ?? error).includes('NOSCRIPT')) {
        throw this.#failed(script.name, error);
      }
    }
    // The server forgot the script (restart, failover, SCRIPT FLUSH): EVAL runs it and caches it again.
    return this.#call(script.name, 'EVAL', script.source, ...words);
  }

  /**
   * Every key the store writes has a TTL, so `volatile-*` policies (the managed-Redis default) evict
   * them first and `allkeys-*` may: an evicted "done" runs its event again. Read once; a server that
   * refuses CONFIG (many managed ones) is not asked again and says nothing.
   */
  async #checkEvictionPolicy(): Promise<void> {
    if (this.#policyChecked) return;
    this.#policyChecked = true;
    let reply: unknown;
    try {
      reply = await this.#send('CONFIG', 'GET', 'maxmemory-policy');
    } catch {
      return;
    }
    const policy = Array.isArray(reply)
      ? reply[1]
      : reply instanceof Map
        ? reply.get('maxmemory-policy')
        : (reply as Record<string, unknown> | null)?.['maxmemory-policy'];
    const warning = typeof policy === 'string' ? maxmemoryPolicyWarning(policy, 'RedisStore') : undefined;
    if (warning !== undefined) this.#log.warn({ maxmemoryPolicy: policy }, warning);
  }

  /** Loads the scripts once; a failure is forgotten, so the next call tries again. */
  #load(scripts: readonly RedisScript[]): Promise<void> {
    let loaded = this.#loaded.get(scripts);
    if (loaded === undefined) {
      loaded = Promise.all(scripts.map((s) => this.#call('load', 'SCRIPT', 'LOAD', s.source))).then(
        () => void this.#checkEvictionPolicy(),
        (error: unknown) => {
          this.#loaded.delete(scripts);
          throw error;
        },
      );
      this.#loaded.set(scripts, loaded);
    }
    return loaded;
  }

  async #call(what: string, ...words: string[]): Promise<unknown> {
    try {
      return await this.#send(...words);
    } catch (error) {
      throw this.#failed(what, error);
    }
  }

  #failed(what: string, error: unknown): Error {
    const reason = error instanceof Error ? error.message : String(error);
    return new Error(`[service-webhooks] RedisStore: ${what} failed: ${reason}`, { cause: error });
  }
}
