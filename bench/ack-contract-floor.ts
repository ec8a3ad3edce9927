// The contract's floor on BullMQ, for the ack bench's floor rows (issue 36): a hand-written node:http
// server that does only what a receiver with an inbox must do before it acknowledges, held to the
// same contract as the Fastify floor (bench/fastify-contract-floor.ts), the cheapest way we know of
// each step (the receiver's own leaf helpers where they are that), and nothing a library adds:
// - the verification handshake echoed (spec 5.3);
// - the token (`Bearer`, any case) compared in constant time over a fixed width, before the body;
// - the two media types in UTF-8, no content coding (415); the body bounded (1 MB, 413), taken in one
//   read when node has buffered it (as the receiver's node door does), strict UTF-8 (400);
// - the JSON parsed with a proto guard (`secure-json-parse`'s walk, only for a text that could spell
//   such a key; such keys dropped, as the receiver does);
// - the CloudEvents required attributes, `data` an object, and spec section 6's rules for access-pass
//   events (the bench's events);
// - each event queued once, by the inbox's promise (docs/inbox.md, "What the Service sees"): the
//   receiver's `idempotencyKey`, claimed before the enqueue, a key being queued answered 409 +
//   Retry-After, a queued one `200 duplicate` without touching the queue, the done keys bounded
//   first-in (100 000, the MemoryStore's default);
// - the job the inbox's workers run (`queuedDelivery`, `jobIdFor`, `attempts` and `backoff`: without
//   them a failed handler's event is not retried, and is lost);
// - the enqueue's wait bounded (5 s, the receiver's `idempotency.timeoutMs`, one timer for all):
//   503 + Retry-After, and the claim released, when the queue does not confirm in time;
// - every error as problem+json, an answer with its length.
// What it leaves out, so it is cheaper than the contract, never dearer: the per-type data schemas
// beyond section 6's rules (the receiver checks each field), the envelope's attribute formats (`time`
// as RFC 3339, extension names), the typed event, leases and retention, tracing, metrics. Where the
// bare `queue.add` server is what the engine costs, this is what the contract costs.
import { isUtf8 } from 'node:buffer';
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import secureJson from 'secure-json-parse';
import { CHALLENGE_HEADER } from '../lib/core/auth/handshake';
import { deadlineQueue, TIMED_OUT } from '../lib/core/dispatch/deadline-queue';
import { fastStringPrototype } from '../lib/fast-string-prototype';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { jobIdFor, queuedDelivery } from '../lib/inbox/queued-delivery';
import { TOKEN } from './bench-events';
import { eventClaims, isCheckedEvent, LIMIT, RETRY_AFTER, VALID_CHALLENGE, WIDTH } from './contract-checks';

/** The receiver's `idempotency.timeoutMs`: how long an enqueue may take. */
const TIMEOUT_MS = 5_000;
/**
 * The job options the BullMQ inbox gives every job on its own queue (lib/bullmq/bullmq-inbox.ts): the
 * retention is its workers'.
 */
const JOB_OPTIONS = { attempts: 13, backoff: { type: 'service-webhooks' } };
const SAFE_JSON = { protoAction: 'remove', constructorAction: 'remove' } as const;
const MAYBE_PROTO = /__proto__|constructor/;
/** The media types taken, with their parameters: UTF-8 or none. */
const MEDIA_TYPE = /^application\/(?:cloudevents\+)?json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

function problem(res: http.ServerResponse, status: number, title: string, headers: string[] = []): void {
  const body = JSON.stringify({ type: 'about:blank', title, status });
  res.writeHead(status, [
    ...headers,
    'Content-Type',
    'application/problem+json',
    'Content-Length',
    String(Buffer.byteLength(body)),
  ]);
  res.end(body);
}

function answer(res: http.ServerResponse, body: string): void {
  res.writeHead(200, [
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    String(Buffer.byteLength(body)),
  ]);
  res.end(body);
}

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
  const { running, done, finish } = eventClaims();
  const deadlines = deadlineQueue(TIMEOUT_MS);

  const received = (req: http.IncomingMessage, res: http.ServerResponse, bytes: Buffer) => {
    if (!isUtf8(bytes)) return problem(res, 400, 'Bad Request');
    const text = bytes.toString('utf8');
    let event: Record<string, unknown> | null;
    try {
      event = JSON.parse(text) as Record<string, unknown> | null;
      // The proto guard's walk only for text that could spell such a key (an escape could spell one).
      if (typeof event === 'object' && event !== null && (MAYBE_PROTO.test(text) || text.includes('\\u')))
        secureJson.scan(event, SAFE_JSON);
    } catch {
      return problem(res, 400, 'Bad Request');
    }
    const challenge = req.headers[CHALLENGE_HEADER];
    if (challenge !== undefined) {
      const value = (event as { challenge?: unknown } | null)?.challenge ?? challenge;
      if (typeof value !== 'string' || !VALID_CHALLENGE.test(value)) return problem(res, 400, 'Bad Request');
      return answer(res, JSON.stringify({ challenge: value }));
    }
    if (!isCheckedEvent(event)) return problem(res, 400, 'Bad Request');
    const { id, source, type } = event;
    const key = idempotencyKey('', source, id);
    if (running.has(key)) return problem(res, 409, 'Conflict', ['Retry-After', RETRY_AFTER]);
    if (done.has(key)) return answer(res, JSON.stringify({ id, type, status: 'duplicate' }));
    running.add(key);
    const time = typeof event.time === 'string' ? event.time : null;
    const header = (name: string) => {
      const value = req.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const delivery = queuedDelivery(key, { id, type, source, time, raw: event }, header, null, text);
    deadlines
      .wait(queue.add(type, delivery, { ...JOB_OPTIONS, jobId: jobIdFor(key) }), performance.now())
      .then(
        (settled) => {
          if (settled === TIMED_OUT) {
            running.delete(key);
            return problem(res, 503, 'Service Unavailable', ['Retry-After', RETRY_AFTER]);
          }
          finish(key);
          answer(res, JSON.stringify({ id, type, status: 'queued' }));
        },
        () => {
          running.delete(key);
          problem(res, 503, 'Service Unavailable', ['Retry-After', RETRY_AFTER]);
        },
      );
  };

  /** The body by events, bounded: a body node has not buffered whole by the first microtask. */
  const readByEvents = (req: http.IncomingMessage, res: http.ServerResponse) => {
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
      if (size <= LIMIT) received(req, res, Buffer.concat(chunks));
    });
  };

  return {
    listen: (req, res) => {
      if (req.method !== 'POST') return problem(res, 405, 'Method Not Allowed', ['Allow', 'POST']);
      const authorization = req.headers.authorization;
      given.fill(0, 0, expectedLength + 1);
      const length = typeof authorization === 'string' ? given.write(authorization, 'latin1') : -1;
      // The scheme in any case (RFC 9110): folded to "Bearer" (`& ~0x20` and `| 0x20` make these
      // letters of no other byte).
      if (length >= 6) {
        given[0] = (given[0] as number) & ~0x20;
        for (let i = 1; i < 6; i++) given[i] = (given[i] as number) | 0x20;
      }
      // Both compared before either decides, over the whole width.
      const same = timingSafeEqual(given, expected);
      if (!same || length !== expectedLength)
        return problem(res, 401, 'Unauthorized', ['WWW-Authenticate', 'Bearer']);
      const contentType = req.headers['content-type'];
      if (
        contentType === undefined ||
        !MEDIA_TYPE.test(contentType) ||
        req.headers['content-encoding'] !== undefined
      )
        return problem(res, 415, 'Unsupported Media Type');
      const declared = Number(req.headers['content-length']);
      if (declared > LIMIT) return problem(res, 413, 'Content Too Large');
      // The whole body in one read when node's parser buffered it with the head (most deliveries).
      queueMicrotask(() => {
        if (
          Number.isSafeInteger(declared) &&
          req.readableLength === declared &&
          req.headers['transfer-encoding'] === undefined
        )
          received(req, res, declared === 0 ? Buffer.alloc(0) : (req.read() as Buffer));
        else readByEvents(req, res);
      });
    },
    close: () => queue.close(),
  };
}
