// The contract's floor on BullMQ, for the ack bench's floor rows (issue 36): a hand-written node:http
// server that does only what a receiver with an inbox must do before it acknowledges, held to the
// same contract as the Fastify floor (bench/fastify-contract-floor.ts), and nothing a library adds:
// - the token compared in constant time over a fixed width, before the body is read;
// - the two media types, the body bounded (1 MB), the JSON parsed with a proto guard
//   (`secure-json-parse`'s walk, only for a text that could spell such a key);
// - the CloudEvents required attributes, `data` an object, and spec section 6's rules for access-pass
//   events (the bench's events), as the receiver's default strict validation does;
// - each event queued once, by the inbox's promise (docs/inbox.md, "What the Service sees"): an
//   unambiguous, bounded key (the receiver's own `idempotencyKey`), claimed before the enqueue, a key
//   being queued answered 409 + Retry-After, a queued one `200 duplicate` without touching the queue,
//   the done keys bounded first-in (100 000, the MemoryStore's default);
// - the redelivery-safe job id of the key (`jobIdFor`: CloudEvents ids are unique only within a
//   source; BullMQ ids may not hold `:`, pg-boss's must be UUIDs), a queued delivery that keeps the
//   envelope's text and no credential, the inbox's job options;
// - the enqueue's wait bounded (5 s, the receiver's `idempotency.timeoutMs`): 503 + Retry-After, and
//   the claim released, when the queue does not confirm in time;
// - every error as problem+json, an answer with its length.
// What it leaves out (product, not contract): the typed event, leases and retention, tracing, metrics,
// the handshake (no per-request cost). Where the bare `queue.add` server is what the engine costs, this
// is what the contract costs: the bare row can only be met beyond it by doing less than the contract.
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import secureJson from 'secure-json-parse';
import { fastStringPrototype } from '../lib/fast-string-prototype';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { jobIdFor } from '../lib/inbox/queued-delivery';
import { TOKEN } from './bench-events';

/** The receiver's defaults: `limit` '1mb', MemoryStore `maxEntries` 100 000, `idempotency.timeoutMs` 5 s. */
const LIMIT = 1024 * 1024;
const MAX_DONE = 100_000;
const TIMEOUT_MS = 5_000;
const RETRY_AFTER = '30';
/** Tokens are compared over this width whatever their length, so the time tells nothing of it. */
const WIDTH = 256;
/** The kept request headers, as the inbox keeps them (never credentials). */
const KEPT = ['user-agent', 'content-type', 'traceparent', 'tracestate', 'x-service-webhook-attempt'];
/**
 * The job options the BullMQ inbox gives every job on its own queue (lib/bullmq/bullmq-inbox.ts): the
 * retention is its workers'.
 */
const JOB_OPTIONS = { attempts: 13, backoff: { type: 'service-webhooks' } };
const SAFE_JSON = { protoAction: 'error', constructorAction: 'error' } as const;
const MAYBE_PROTO = /__proto__|constructor/;

function problem(
  res: http.ServerResponse,
  status: number,
  title: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ type: 'about:blank', title, status });
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

function answer(res: http.ServerResponse, body: string): void {
  res.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** Spec section 6, rules 2 and 3, for layout A (the `devices` array) and B (`device`). */
function accessPassBroken(type: string, data: Record<string, unknown>): boolean {
  const { devices, details } = data;
  if (!Array.isArray(devices)) return type === 'ag.access_pass.issued' ? false : !('device' in data);
  if (type === 'ag.access_pass.issued' || details != null) return true;
  return type.startsWith('ag.access_pass.devices.') && devices.length !== 1;
}

const mediaTypeOk = (value: string | undefined) => {
  const type = value?.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'application/cloudevents+json' || type === 'application/json';
};

/** The floor's request listener on the BullMQ queue `floor` at `url`, and how to close it. */
export async function contractFloor(
  url: string,
): Promise<{ listen: http.RequestListener; close(): Promise<void> }> {
  const { Queue } = await import('bullmq');
  const { hostname, port } = new URL(url);
  const queue = new Queue('floor', { connection: { host: hostname, port: Number(port) } });
  // The best a hand-written server can do: ioredis leaves String.prototype slow (as the inbox does).
  fastStringPrototype();
  const expected = Buffer.alloc(WIDTH);
  const expectedLength = expected.write(`Bearer ${TOKEN}`, 'latin1');
  const given = Buffer.alloc(WIDTH);
  const running = new Set<string>();
  const done = new Map<string, true>();
  const finish = (key: string) => {
    running.delete(key);
    done.set(key, true);
    while (done.size > MAX_DONE) done.delete(done.keys().next().value as string);
  };

  const received = (req: http.IncomingMessage, res: http.ServerResponse, text: string) => {
    let event: Record<string, unknown> | null;
    try {
      event = JSON.parse(text) as Record<string, unknown> | null;
      // The proto guard's walk only for text that could spell such a key (an escape could spell one).
      if (typeof event === 'object' && event !== null && (MAYBE_PROTO.test(text) || text.includes('\\u')))
        secureJson.scan(event, SAFE_JSON);
    } catch {
      return problem(res, 400, 'Bad Request');
    }
    if (typeof event !== 'object' || event === null) return problem(res, 400, 'Bad Request');
    const { id, source, type, time, data } = event;
    if (
      event.specversion !== '1.0' ||
      typeof id !== 'string' ||
      id === '' ||
      typeof source !== 'string' ||
      source === '' ||
      typeof type !== 'string' ||
      type === '' ||
      typeof data !== 'object' ||
      data === null ||
      Array.isArray(data) ||
      (type.startsWith('ag.access_pass.') && accessPassBroken(type, data as Record<string, unknown>))
    )
      return problem(res, 400, 'Bad Request');
    const key = idempotencyKey('', source, id);
    if (running.has(key)) return problem(res, 409, 'Conflict', { 'Retry-After': RETRY_AFTER });
    if (done.has(key)) return answer(res, JSON.stringify({ id, type, status: 'duplicate' }));
    running.add(key);
    const headers: Record<string, string> = {};
    for (const name of KEPT) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const delivery = {
      key,
      id,
      type,
      source,
      time: typeof time === 'string' ? time : null,
      envelope: text,
      headers,
      traceparent: headers.traceparent ?? null,
      receivedAt: new Date().toISOString(),
    };
    let settled = false;
    // A timer a request, as a hand-written server bounds a wait (the receiver keeps one for all).
    const timer = setTimeout(() => {
      settled = true;
      running.delete(key);
      problem(res, 503, 'Service Unavailable', { 'Retry-After': RETRY_AFTER });
    }, TIMEOUT_MS);
    queue.add(type, delivery, { ...JOB_OPTIONS, jobId: jobIdFor(key) }).then(
      () => {
        if (settled) return;
        clearTimeout(timer);
        finish(key);
        answer(res, JSON.stringify({ id, type, status: 'queued' }));
      },
      () => {
        if (settled) return;
        clearTimeout(timer);
        running.delete(key);
        problem(res, 503, 'Service Unavailable', { 'Retry-After': RETRY_AFTER });
      },
    );
  };

  return {
    listen: (req, res) => {
      if (req.method !== 'POST') return problem(res, 405, 'Method Not Allowed', { Allow: 'POST' });
      const authorization = req.headers.authorization;
      given.fill(0);
      const length = typeof authorization === 'string' ? given.write(authorization, 'latin1') : -1;
      // Both compared before either decides, over the whole width.
      const same = timingSafeEqual(given, expected);
      if (!same || length !== expectedLength)
        return problem(res, 401, 'Unauthorized', { 'WWW-Authenticate': 'Bearer' });
      if (!mediaTypeOk(req.headers['content-type'])) return problem(res, 415, 'Unsupported Media Type');
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > LIMIT) {
          problem(res, 413, 'Content Too Large');
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => {
        if (size > LIMIT) return;
        received(req, res, Buffer.concat(chunks).toString('utf8'));
      });
    },
    close: () => queue.close(),
  };
}
