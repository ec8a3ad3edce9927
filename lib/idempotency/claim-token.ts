import { nodeCrypto } from '../lazy-crypto';

/** 64 random bits per process, then a counter: unique across instances, short, and no syscall per claim. */
let processNonce: string | undefined;
let counter = 0;

/** A token that names one claim, so only its holder can release it. */
export function claimToken(): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  // Drawn at the first claim, not at load: node:crypto costs a cold start 4 ms.
  processNonce ??= nodeCrypto().randomBytes(8).toString('base64url');
  return `${processNonce}.${counter.toString(36)}`;
}
