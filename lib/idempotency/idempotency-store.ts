/** What {@link IdempotencyStore.claim} found. */
export type ClaimResult =
  /** The key was free (or its lease had run out) and is now held by the caller's token. */
  | 'claimed'
  /** Another delivery holds the key: its handlers are running now. */
  | 'busy'
  /** The event was processed successfully before. */
  | 'done';

/** What {@link IdempotencyStore.claimHandlers} found: the claim, and the handlers that succeeded before. */
export interface HandlersClaim {
  /** What `claim` would have answered. */
  result: ClaimResult;
  /**
   * The names of the event's handlers whose success an earlier delivery recorded with
   * `markHandlerDone`; empty for a new event, and when `result` is not `'claimed'`.
   */
  succeeded: readonly string[];
  /**
   * When `result` is `'claimed'`: the number of this run of the event's handlers that have not
   * succeeded, 1 for the first. It is 1 plus the earlier runs whose failure was settled by
   * `release(key, token, retentionMs)`; a run cut short by a crash (its lease ran out) is not
   * counted, nor a claim given back with nothing run (`release` without `retentionMs`). Absent from a
   * store that does not count: the receiver then says 1.
   */
  attempt?: number;
}

/** What a store holds for an event's key: `'processing'` while a delivery holds its lease, `'done'` once its handlers succeeded. */
export type KeyState = 'processing' | 'done';

/**
 * Remembers which events are being processed and which are done, so each event's handlers succeed
 * exactly once although the Service delivers it again and again.
 *
 * Every method is one atomic step, so a shared store (Redis, a database) can serve many receiver
 * instances: `claim` is `SET key token NX PX leaseMs` (and a `GET` when it fails), `markDone` and `release` compare the
 * token first (fencing: a delivery whose lease ran out and was taken over changes nothing).
 *
 * A method that throws or rejects means "the store is unavailable": the receiver then answers 503,
 * runs no handler and acknowledges nothing.
 */
export interface IdempotencyStore {
  /**
   * `true` when every call settles at once, in this process, and cannot hang (an in-memory store):
   * the receiver then sets no timer around its calls. Leave it unset for a store across a network,
   * so every call is bounded by the store timeout. Default: unset (every call bounded).
   */
  readonly answersAtOnce?: boolean;
  /**
   * Takes `key` for processing under `token` for `leaseMs` milliseconds, unless it is done or held by
   * an unexpired lease. A lease that runs out frees the key, so a crashed process cannot block it.
   */
  claim(key: string, token: string, leaseMs: number): Promise<ClaimResult>;
  /**
   * Records that the key's handlers all succeeded; kept at least `retentionMs` milliseconds, which
   * must outlast the Service's retry window (6 hours). Applies only while `token` holds the lease, or
   * no one does (it ran out and was not taken), or the key is done already; resolves `false`, changing
   * nothing, when another delivery holds it: that delivery's outcome decides, so a failure of it is
   * never covered up by this one's success. A store that resolves nothing counts as applied.
   */
  markDone(key: string, token: string, retentionMs: number): Promise<boolean | void>;
  /**
   * Extends the lease `token` holds on `key` to `leaseMs` milliseconds from now, so a try whose
   * handlers run long keeps the event while they run (the inbox's worker calls it every third of the
   * lease, as BullMQ renews a job's lock). Fenced: resolves `false`, changing nothing, when `token`
   * does not hold a live lease on the key (it ran out, was released or taken over, or the key is
   * done). Optional: a worker whose store lacks it warns at start that a handler running past the
   * lease (`2 × timeoutMs` by default) may be started again while it runs. Defaults to none.
   */
  renewLease?(key: string, token: string, leaseMs: number): Promise<boolean>;
  /**
   * As `claim`, in the same one step, also telling which handlers of the event succeeded in an
   * earlier delivery (recorded by `markHandlerDone`). The receiver calls it instead of `claim` for an
   * event that runs more than one handler, so a retry runs only the handlers that have not succeeded.
   * Optional, with `markHandlerDone`: a store without both runs every handler of a retried event
   * again, as before. Defaults to none.
   */
  claimHandlers?(key: string, token: string, leaseMs: number): Promise<HandlersClaim>;
  /**
   * Records that the handler named `handler` succeeded for the event, kept at least `retentionMs`
   * milliseconds (the event's retention). Fenced: only while `token` holds a live lease on the key;
   * resolves `false`, changing nothing, otherwise (the lease ran out or moved, or the key is done or
   * unknown), so a late run never records a success for the next holder. The records outlive the
   * lease: `release`, or a lease that runs out, frees the key but keeps them, and `markDone` makes
   * them moot. Defaults to none.
   */
  markHandlerDone?(key: string, token: string, handler: string, retentionMs: number): Promise<boolean>;
  /**
   * Frees a key after a failure so the next delivery runs the handlers again; only if `token` holds
   * it. Given `retentionMs` (handlers ran and one failed), a store that records handlers also counts
   * the failed run and keeps that count, with the recorded successes, at least `retentionMs`
   * milliseconds: the next `claimHandlers` says `attempt` one more. Without it (a claim given back
   * with nothing run), nothing is counted. A store may ignore it (then `attempt` stays 1).
   */
  release(key: string, token: string, retentionMs?: number): Promise<void>;
  /** The key's state, or null when it is unknown, expired or released. */
  get(key: string): Promise<KeyState | null>;
}
