import type {
  EntityLeaseResult,
  EntityOrderingStore,
  EntityPosition,
} from '../idempotency/entity-ordering-store';
import type {
  ClaimResult,
  HandlersClaim,
  IdempotencyStore,
  KeyState,
} from '../idempotency/idempotency-store';
import { storeAnswer, unexpectedAnswer } from '../idempotency/store-answer';
import { storedKey, storedPosition } from '../idempotency/store-keys';
import { checkStoreOptions, storeOptionsError, wholePositive } from '../idempotency/store-options';
import { postgresSql, type PostgresSql } from './postgres-sql';

/** What the store needs of a pool: `pg`'s `Pool` fits, and so does anything with the same `query`. */
/** What the store needs of a `pg` `Pool`: its `query`. */
export interface PostgresQueryable {
  /** Runs one parameterized statement (`$1`, `$2`, …) and resolves with its result. */
  query(
    text: string,
    values?: unknown[],
  ): Promise<{
    /** The rows returned. */
    rows: unknown[];
    /** How many rows the statement changed, when the driver says. */
    rowCount?: number | null;
  }>;
}

/** Options of {@link PostgresStore}. */
export interface PostgresStoreOptions {
  /** Runs the store's queries: a `pg` `Pool` (not a single `Client`: calls run concurrently). Required. */
  pool: PostgresQueryable;
  /** The table, optionally schema-qualified (`webhooks.idempotency`). Defaults to `'service_webhooks_idempotency'`. */
  table?: string;
  /** At most how often a store call also deletes a batch of expired rows, in milliseconds. Defaults to `60_000`. */
  cleanupIntervalMs?: number;
  /** Most expired rows deleted by one cleanup statement. Defaults to `1_000`. */
  cleanupBatchSize?: number;
}

const KNOWN_KEYS = ['pool', 'table', 'cleanupIntervalMs', 'cleanupBatchSize'] as const;
const CLAIM_RESULTS: readonly ClaimResult[] = ['claimed', 'busy', 'done'];
const LEASE_RESULTS: readonly EntityLeaseResult[] = ['leased', 'stale', 'busy'];
/** Lower-case identifiers need no quoting; 40 characters leave room for the index name's suffix. */
const TABLE_NAME = /^[a-z_][a-z0-9_]{0,39}(\.[a-z_][a-z0-9_]{0,39})?$/;
const UNDEFINED_TABLE = '42P01';

/**
 * An {@link IdempotencyStore} in a PostgreSQL table, shared by every instance of the receiver, for
 * apps that have PostgreSQL and no Redis. Each method is one statement; `claim` is one upsert that
 * takes a free or expired key. Time is the database's clock, so instances' clocks never disagree.
 * Run `await store.setup()` once at boot (or the SQL of {@link postgresSetupSql} in a migration).
 */
export class PostgresStore implements IdempotencyStore, EntityOrderingStore {
  readonly #pool: PostgresQueryable;
  readonly #sql: PostgresSql;
  readonly #cleanupIntervalMs: number;
  readonly #cleanupBatchSize: number;
  #lastCleanup = Date.now();

  constructor(options: PostgresStoreOptions) {
    checkStoreOptions(
      options,
      KNOWN_KEYS,
      'PostgresStore',
      'takes an options object: new PostgresStore({ pool })',
    );
    const { pool, table = 'service_webhooks_idempotency' } = options;
    if (typeof pool !== 'object' || pool === null || typeof pool.query !== 'function') {
      throw storeOptionsError(
        'PostgresStore',
        "pool must have query(text, values), e.g. new Pool() from 'pg'",
      );
    }
    if (typeof table !== 'string' || !TABLE_NAME.test(table)) {
      throw storeOptionsError(
        'PostgresStore',
        `table must be a lower-case name of letters, digits and _ (at most 40), optionally schema.table (got ${JSON.stringify(table)})`,
      );
    }
    this.#pool = pool;
    this.#sql = postgresSql(table);
    this.#cleanupIntervalMs = wholePositive(
      'PostgresStore',
      'cleanupIntervalMs',
      options.cleanupIntervalMs ?? 60_000,
    );
    this.#cleanupBatchSize = wholePositive(
      'PostgresStore',
      'cleanupBatchSize',
      options.cleanupBatchSize ?? 1_000,
    );
  }

  /** Creates the table and its index when absent; safe to run from every instance at once. */
  async setup(): Promise<void> {
    await this.#query('setup', this.#sql.setup);
  }

  claim(key: string, token: string, leaseMs: number): Promise<ClaimResult> {
    return this.#claim('claim', key, token, leaseMs);
  }

  async claimHandlers(key: string, token: string, leaseMs: number): Promise<HandlersClaim> {
    const result = await this.#claim('claimHandlers', key, token, leaseMs);
    if (result !== 'claimed') return { result, succeeded: [] };
    // What earlier holders recorded, read by a statement of its own, begun after the claim: the
    // claim's statement reads its snapshot, taken as it began, and a holder may have claimed, recorded
    // and released the key within that statement (its backend stalled before the insert), so no read
    // of that snapshot can know what it missed.
    const row = (await this.#query('claimHandlers', this.#sql.handlersOf, [storedKey(key)])).rows[0] as
      { handlers?: unknown; attempt?: unknown } | undefined;
    const names = row?.handlers ?? [];
    if (!Array.isArray(names)) throw unexpectedAnswer('PostgresStore', 'claimHandlers', names);
    const attempt = Number(row?.attempt);
    if (!Number.isSafeInteger(attempt) || attempt < 1)
      throw unexpectedAnswer('PostgresStore', 'claimHandlers', row?.attempt);
    return { result, succeeded: names.map(String), attempt };
  }

  async markHandlerDone(key: string, token: string, handler: string, retentionMs: number): Promise<boolean> {
    const values = [storedKey(key), token, handler, retentionMs];
    const { rows } = await this.#query('markHandlerDone', this.#sql.markHandlerDone, values);
    return rows.length > 0;
  }

  async markDone(key: string, token: string, retentionMs: number): Promise<boolean> {
    const { rows } = await this.#query('markDone', this.#sql.markDone, [storedKey(key), token, retentionMs]);
    return rows.length > 0;
  }

  async renewLease(key: string, token: string, leaseMs: number): Promise<boolean> {
    const { rows } = await this.#query('renewLease', this.#sql.renewLease, [storedKey(key), token, leaseMs]);
    return rows.length > 0;
  }

  async release(key: string, token: string, retentionMs?: number): Promise<void> {
    if (retentionMs === undefined) await this.#query('release', this.#sql.release, [storedKey(key), token]);
    else await this.#query('release', this.#sql.releaseCounted, [storedKey(key), token, retentionMs]);
  }

  async leaseEntity(
    key: string,
    token: string,
    leaseMs: number,
    position: EntityPosition,
  ): Promise<EntityLeaseResult> {
    this.#cleanupWhenDue();
    const values = [storedKey(key), token, leaseMs, storedPosition(position)];
    const { rows } = await this.#query('leaseEntity', this.#sql.leaseEntity, values);
    return this.#answer('leaseEntity', rows, 'result', LEASE_RESULTS, 'busy');
  }

  async advanceEntity(
    key: string,
    token: string,
    position: EntityPosition,
    retentionMs: number,
  ): Promise<boolean> {
    const values = [storedKey(key), token, storedPosition(position), retentionMs];
    const { rows } = await this.#query('advanceEntity', this.#sql.advanceEntity, values);
    const released = (rows[0] as { released?: unknown } | undefined)?.released;
    if (typeof released !== 'boolean') throw unexpectedAnswer('PostgresStore', 'advanceEntity', released);
    return released;
  }

  async renewEntity(key: string, token: string, leaseMs: number): Promise<boolean> {
    const { rows } = await this.#query('renewEntity', this.#sql.renewEntity, [
      storedKey(key),
      token,
      leaseMs,
    ]);
    return rows.length > 0;
  }

  async releaseEntity(key: string, token: string): Promise<void> {
    await this.#query('releaseEntity', this.#sql.releaseEntity, [storedKey(key), token]);
  }

  async get(key: string): Promise<KeyState | null> {
    const { rows } = await this.#query('get', this.#sql.get, [storedKey(key)]);
    const row = rows[0] as { done?: unknown } | undefined;
    if (row === undefined) return null;
    return row.done === true ? 'done' : 'processing';
  }

  /**
   * Deletes one batch of expired rows (at most `cleanupBatchSize` of events, as many of entities and of handlers) and
   * says how many went.
   */
  async cleanup(): Promise<number> {
    this.#lastCleanup = Date.now();
    const batch = [this.#cleanupBatchSize];
    const events = await this.#query('cleanup', this.#sql.cleanup, batch);
    const entities = await this.#query('cleanup', this.#sql.cleanupEntities, batch);
    const handlers = await this.#query('cleanup', this.#sql.cleanupHandlers, batch);
    return (events.rowCount ?? 0) + (entities.rowCount ?? 0) + (handlers.rowCount ?? 0);
  }

  /** Expired rows are harmless but take room: one batch now and then, off the request's path. */
  #cleanupWhenDue(): void {
    if (Date.now() - this.#lastCleanup < this.#cleanupIntervalMs) return;
    // A failed cleanup only leaves rows for the next one; the request never waits on it.
    this.cleanup().catch(() => undefined);
  }

  /** The one row's `column` read by the stores' one rule (storeAnswer); `none` when there is no row. */
  /** The claim statement, its errors named after `what` called it. */
  async #claim(what: string, key: string, token: string, leaseMs: number): Promise<ClaimResult> {
    this.#cleanupWhenDue();
    const { rows } = await this.#query(what, this.#sql.claim, [storedKey(key), token, leaseMs]);
    // No row: one claimed at the same instant, not yet visible to this statement's snapshot (busy).
    return this.#answer(what, rows, 'result', CLAIM_RESULTS, 'busy');
  }

  #answer<T>(what: string, rows: unknown[], column: string, results: readonly T[], none: T): T {
    if (rows.length === 0) return none;
    const value = (rows[0] as Record<string, unknown>)[column];
    if (rows.length > 1) throw unexpectedAnswer('PostgresStore', what, `${rows.length} rows`);
    return storeAnswer('PostgresStore', what, value, results);
  }

  async #query(what: string, text: string, values?: unknown[]) {
    try {
      return await this.#pool.query(text, values);
    } catch (error) {
      const hint =
        (error as { code?: unknown } | null)?.code === UNDEFINED_TABLE
          ? ' (the table does not exist: run await store.setup() once, or the SQL of postgresSetupSql())'
          : '';
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`[service-webhooks] PostgresStore: ${what} failed: ${reason}${hint}`, { cause: error });
    }
  }
}
