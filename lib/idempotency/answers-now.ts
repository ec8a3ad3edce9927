import type { ClaimResult, HandlersClaim, IdempotencyStore } from './idempotency-store';

/**
 * The key under which a built-in store that answers in this process offers its calls without a
 * promise each. Not part of the store contract: a user's store is always called through its async
 * methods, and so is a built-in one whose methods were replaced (a subclass, a spy).
 */
export const ANSWERS_NOW = Symbol('service-webhooks.answersNow');

/** The same steps as the store's async methods, answered at once; a throw is a failure, as a rejection. */
export interface StoreCallsNow {
  claim(key: string, token: string, leaseMs: number): ClaimResult;
  claimHandlers(key: string, token: string, leaseMs: number): HandlersClaim;
  markDone(key: string, token: string, retentionMs: number): boolean;
  release(key: string, token: string, retentionMs?: number): void;
}

/** A store that may offer {@link StoreCallsNow}. */
interface MayAnswerNow {
  [ANSWERS_NOW]?: () => StoreCallsNow | undefined;
}

/** The store's calls without promises, when it offers them; otherwise undefined (call its methods). */
export function storeCallsNow(store: IdempotencyStore): StoreCallsNow | undefined {
  return (store as IdempotencyStore & MayAnswerNow)[ANSWERS_NOW]?.();
}
