// What both hand-written contract floors (bench/fastify-contract-floor.ts, bench/ack-contract-floor.ts)
// check and keep the same way, so the two floors hold one contract: the receiver's defaults, the
// event's checks, and each event's claim.

/** The receiver's defaults: `limit` '1mb', MemoryStore `maxEntries` 100 000, `retryAfterSeconds` 30. */
export const LIMIT = 1024 * 1024;
export const MAX_DONE = 100_000;
export const RETRY_AFTER = '30';
/** Tokens are compared over this width whatever their length, so the time tells nothing of it. */
export const WIDTH = 256;
export const VALID_CHALLENGE = /^[\x21-\x7e]{1,512}$/;

/** An event the floors take: the CloudEvents required attributes and an object `data`. */
export type CheckedEvent = Record<string, unknown> & {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  data: Record<string, unknown>;
};

/** Spec section 6, rules 2 and 3, for layout A (the `devices` array) and B (`device`). */
function accessPassBroken(type: string, data: Record<string, unknown>): boolean {
  const { devices, details } = data;
  if (!Array.isArray(devices)) return type === 'ag.access_pass.issued' ? false : !('device' in data);
  if (type === 'ag.access_pass.issued' || details != null) return true;
  return type.startsWith('ag.access_pass.devices.') && devices.length !== 1;
}

/**
 * Whether a parsed body is an event the floors take: the required attributes, `data` an object, and
 * section 6's rules for access-pass events (the bench's events), as the receiver's strict validation.
 * A predicate, not a copy: a floor's request allocates nothing more for it.
 */
export function isCheckedEvent(body: unknown): body is CheckedEvent {
  if (typeof body !== 'object' || body === null) return false;
  const { specversion, id, source, type, data } = body as Record<string, unknown>;
  return (
    specversion === '1.0' &&
    typeof id === 'string' &&
    id !== '' &&
    typeof source === 'string' &&
    source !== '' &&
    typeof type === 'string' &&
    type !== '' &&
    typeof data === 'object' &&
    data !== null &&
    !Array.isArray(data) &&
    !(type.startsWith('ag.access_pass.') && accessPassBroken(type, data as Record<string, unknown>))
  );
}

/**
 * Each event run (or queued) once: the keys running now, answered 409, and the done keys, bounded
 * first-in; `finish` moves a key from the one to the other.
 */
export function eventClaims(): { running: Set<string>; done: Map<string, true>; finish(key: string): void } {
  const running = new Set<string>();
  const done = new Map<string, true>();
  return {
    running,
    done,
    finish(key) {
      running.delete(key);
      done.set(key, true);
      while (done.size > MAX_DONE) done.delete(done.keys().next().value as string);
    },
  };
}
