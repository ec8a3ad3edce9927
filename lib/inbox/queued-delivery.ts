import type { AnyWebhookEvent } from '../events/webhook-event';
import { nodeCrypto } from '../lazy-crypto';

/** The request headers a queued delivery keeps for `ctx.header` in the worker: never credentials. */
const KEPT_HEADERS = [
  'user-agent',
  'content-type',
  'traceparent',
  'tracestate',
  'x-service-webhook-attempt',
] as const;

/**
 * One delivery as the queue holds it: enough to run the handlers later exactly as the receiver
 * would have, and nothing secret.
 */
export interface QueuedDelivery {
  /** The idempotency key (scope, source, id): the queue's job id is derived from it. */
  key: string;
  /** The CloudEvent `id`. */
  id: string;
  /** The event type, as sent. */
  type: string;
  /** The CloudEvent `source`. */
  source: string;
  /** The event's RFC 3339 `time` as sent, or null when it had none. */
  time: string | null;
  /**
   * The CloudEvents envelope as received (`event.raw`), as JSON text: the request body's own text in
   * structured mode, else the envelope written as JSON (binary mode, a body another parser read, a
   * job queued by a version before 2026-11-26). Read it with the receiver's parse (`readQueuedEvent`).
   * Text, not an object, so an open data field nested at any depth the receiver accepts is queued:
   * the queues serialize an object recursively (BullMQ, the PostgreSQL driver) or cap its depth
   * (PostgreSQL's jsonb), and would refuse that event on every redelivery.
   */
  envelope: string;
  /** The kept request headers, by lowercase name. */
  headers: Record<string, string>;
  /** The delivery span's W3C traceparent (else the request's), so the job's span links to it. */
  traceparent: string | null;
  /** ISO 8601, when the receiver queued it. */
  receivedAt: string;
  /**
   * Set on an event a strict receiver quarantined (`quarantine: true`) for breaking spec rules 2–5:
   * the worker holds it to them again, so a replay runs it only once the code deployed accepts it.
   */
  checkRules?: true;
}

/**
 * The delivery of `event` as the queue will hold it; `envelopeText`, the body text `event.raw` was
 * parsed from, is queued as is when given (else the envelope is written as JSON text).
 */
export function queuedDelivery(
  key: string,
  event: Pick<AnyWebhookEvent, 'id' | 'type' | 'source' | 'time' | 'raw'>,
  header: (name: string) => string | undefined,
  traceparent: string | null,
  envelopeText?: string,
): QueuedDelivery {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = header(name);
    if (value !== undefined) headers[name] = value;
  }
  return {
    key,
    id: event.id,
    type: event.type,
    source: event.source,
    time: event.time,
    envelope: envelopeText ?? jsonText(event.raw),
    headers,
    traceparent: traceparent ?? headers.traceparent ?? null,
    receivedAt: isoNow(),
  };
}

/** The second `isoNow` last wrote, and its ISO text up to the milliseconds. */
let second = NaN;
let secondText = '';

/**
 * `new Date().toISOString()`, the same text: V8 formats a date through its C++ printf, some 3k
 * instructions a call (callgrind), so the text up to the second is kept and only the milliseconds are
 * written for each delivery.
 */
function isoNow(): string {
  // Whole milliseconds, as toISOString takes them: a faked or polyfilled clock may have a fraction.
  const now = Math.trunc(Date.now());
  const s = Math.floor(now / 1000);
  if (s !== second) {
    second = s;
    // "…T12:34:56." with the year in whichever form toISOString writes it (±YYYYYY past 9999).
    secondText = new Date(s * 1000).toISOString().slice(0, -4);
  }
  const ms = now - s * 1000;
  return `${secondText}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
}

/** The variant's hex digit by a hex digit's low two bits: `10xx`. */
const VARIANT_DIGITS = '89ab';

/**
 * The job id of a key, shaped as a UUID (pg-boss ids are UUIDs; BullMQ ids may not hold `:`), from
 * its SHA-256: the same key is the same job on every receiver, so a redelivery never enqueues twice.
 */
export function jobIdFor(key: string): string {
  const crypto = nodeCrypto();
  // The one-shot hash (Node ≥ 21.7) is half the CPU of a Hash object; other runtimes may lack it.
  const hex =
    typeof crypto.hash === 'function'
      ? crypto.hash('sha256', key, 'hex')
      : crypto.createHash('sha256').update(key, 'utf8').digest('hex');
  // Version 8 (custom) and the RFC 9562 variant, so PostgreSQL's uuid type takes it as is. The
  // variant's digit read from the hex digit's code, not through parseInt and toString: those cost
  // the id as much as the rest of its slicing.
  const digit = hex.charCodeAt(16);
  const variant = VARIANT_DIGITS[(digit > 57 ? digit - 87 : digit - 48) & 0x3]!;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Whether a job's data is a queued delivery (a queue can hold anything someone put there). */
export function isQueuedDelivery(value: unknown): value is QueuedDelivery {
  if (typeof value !== 'object' || value === null) return false;
  const d = value as Record<string, unknown>;
  return (
    typeof d.key === 'string' &&
    typeof d.id === 'string' &&
    typeof d.type === 'string' &&
    typeof d.envelope === 'string'
  );
}

/** One handler's state for one queued event, kept with its job and shown on its dead letter. */
export interface HandlerState {
  /** Its success was recorded: a plain replay does not run it again. */
  ok: boolean;
  /** How many tries of the job ran it, across replays (a try whose worker died before saying so is not counted). */
  attempts: number;
  /** The message of its last failure; absent once it succeeded. */
  lastError?: string;
}

/** Each handler's state by its name. */
export type HandlerStates = Record<string, HandlerState>;

/**
 * What a job carries between its tries about the event's handlers, in its data (written through the
 * engine's API: BullMQ's `job.updateData`, pg-boss's `update`).
 */
export interface JobHandlers {
  /** Each handler's state after the job's earlier tries. */
  handlers?: HandlerStates;
  /** Set by a replay naming handlers: only these run, even one whose success was recorded before. */
  runOnly?: readonly string[];
}

function isHandlerState(value: unknown): value is HandlerState {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Record<string, unknown>;
  return (
    typeof s.ok === 'boolean' &&
    typeof s.attempts === 'number' &&
    Number.isSafeInteger(s.attempts) &&
    s.attempts >= 0 &&
    (s.lastError === undefined || typeof s.lastError === 'string')
  );
}

/** The handler states a job's data holds, or undefined when it holds none (or not that shape). */
export function handlerStatesOf(value: unknown): HandlerStates | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const states: HandlerStates = {};
  for (const [name, state] of Object.entries(value)) if (isHandlerState(state)) states[name] = state;
  return states;
}

/** What a job's data says of its handlers: anything malformed (a queue holds what anyone put) is left out. */
export function jobHandlersOf(data: unknown): JobHandlers {
  if (typeof data !== 'object' || data === null) return {};
  const { handlers, runOnly } = data as { handlers?: unknown; runOnly?: unknown };
  const states = handlerStatesOf(handlers);
  const only =
    Array.isArray(runOnly) && runOnly.every((n) => typeof n === 'string') ? (runOnly as string[]) : undefined;
  return {
    ...(states === undefined ? {} : { handlers: states }),
    ...(only === undefined ? {} : { runOnly: only }),
  };
}

/** The job's data without what it carries about its handlers: the queued delivery itself. */
export function withoutHandlers<T extends object>(data: T): T {
  if (!('handlers' in data) && !('runOnly' in data)) return data;
  const { handlers: _states, runOnly: _only, ...rest } = data as T & JobHandlers;
  return rest as T;
}

/**
 * The states a replay naming `names` starts the job with: those handlers not yet done (so they run,
 * and a retry of the replayed job skips one that succeeded in it), the others as they were.
 */
export function replayStates(states: HandlerStates | undefined, names: readonly string[]): HandlerStates {
  const next: HandlerStates = { ...states };
  for (const name of names) next[name] = { ok: false, attempts: states?.[name]?.attempts ?? 0 };
  return next;
}

/** A container being written: its values (an array's, or an object's by `keys`), and how far. */
interface Frame {
  value: object;
  keys: string[] | undefined;
  next: number;
  written: number;
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
const omitted = (value: unknown) =>
  value === undefined || typeof value === 'function' || typeof value === 'symbol';

function resolved(value: unknown, key: string): unknown {
  const toJSON = (value as { toJSON?: unknown } | null | undefined)?.toJSON;
  return typeof toJSON === 'function' ? (toJSON as (key: string) => unknown).call(value, key) : value;
}

/**
 * `JSON.stringify(value)`, at any depth. V8's own recursion overflows the stack at a few thousand
 * levels (an open data field nested 5,000 deep is 10 KB, far under the body limit), and an event the
 * receiver accepted must be queued: so past that, the same text is written with a stack of our own.
 */
export function jsonText(value: unknown): string {
  try {
    const text = JSON.stringify(value) as string | undefined;
    if (text !== undefined) return text;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return deepJsonText(value);
  }
  throw new TypeError('[service-webhooks] the value has no JSON text (undefined, a function or a symbol)');
}

function deepJsonText(root: unknown): string {
  const parts: string[] = [];
  const stack: Frame[] = [];
  // A cycle fails as JSON.stringify's does, never loops: the containers being written, by identity.
  const open = new Set<object>();
  const write = (value: unknown) => {
    if (typeof value !== 'object' || value === null) {
      parts.push(JSON.stringify(value));
      return;
    }
    if (open.has(value)) throw new TypeError('[service-webhooks] cannot queue a value with a cycle');
    open.add(value);
    const keys = Array.isArray(value) ? undefined : Object.keys(value);
    parts.push(keys === undefined ? '[' : '{');
    stack.push({ value, keys, next: 0, written: 0 });
  };
  write(resolved(root, ''));
  for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
    const values = top.value as Record<string, unknown>;
    const length = top.keys?.length ?? (top.value as unknown[]).length;
    let item: { key: string; value: unknown } | undefined;
    while (item === undefined && top.next < length) {
      const key = top.keys?.[top.next] ?? String(top.next);
      top.next++;
      const value = resolved(values[key], key);
      if (top.keys === undefined) item = { key, value: omitted(value) ? null : value };
      else if (!omitted(value)) item = { key, value };
    }
    if (item === undefined) {
      parts.push(top.keys === undefined ? ']' : '}');
      open.delete(top.value);
      stack.pop();
      continue;
    }
    if (top.written++ > 0) parts.push(',');
    if (top.keys !== undefined) parts.push(JSON.stringify(item.key), ':');
    write(item.value);
  }
  return parts.join('');
}
