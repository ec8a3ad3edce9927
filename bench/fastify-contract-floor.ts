// The contract's floor on Fastify, for the receiver bench's Fastify rows (issue 34): a hand-written
// Fastify route that does only what a receiver must do before it answers 200, and nothing a library
// adds. What it keeps:
// - the verification handshake echoed (spec 5.3);
// - the token compared in constant time over a fixed width before the body is read;
// - the two media types, the body bounded (1 MB), the JSON parsed with Fastify's proto guard;
// - the CloudEvents required attributes, `data` an object, and spec section 6's rules for access-pass
//   events (the bench's events), as the receiver's default strict validation does;
// - each event run once: an unambiguous, bounded key (the receiver's own `idempotencyKey`), claimed
//   before the handler and done after, a running key never evicted (409 + Retry-After to its
//   redelivery), the done keys bounded first-in;
// - the handler's failure or timeout answered 500/503 + Retry-After, every error as problem+json.
// What it leaves out (product, not contract): the typed event, leases and retention, delivery records,
// tracing, metrics. Where the plain JSON route is what Fastify costs, this is what the contract costs.
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import Fastify, { type FastifyReply } from 'fastify';
import { CHALLENGE_HEADER } from '../lib/core/auth/handshake';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { TOKEN } from './bench-events';
import { eventClaims, isCheckedEvent, LIMIT, RETRY_AFTER, VALID_CHALLENGE, WIDTH } from './contract-checks';

/** The receiver's `timeoutMs`: how long a handler may take. */
const TIMEOUT_MS = 10_000;

type Handler = (event: Record<string, unknown>) => unknown;

function problem(reply: FastifyReply, status: number, title: string, headers: Record<string, string> = {}) {
  void reply
    .code(status)
    .headers(headers)
    .type('application/problem+json')
    .send({ type: 'about:blank', title, status });
  return reply;
}

/** The floor's request listener; `handler` is the application's (a no-op by default). */
export async function fastifyContractFloor(
  handler: Handler = () => undefined,
): Promise<http.RequestListener> {
  const app = Fastify({ bodyLimit: LIMIT });
  const expected = Buffer.alloc(WIDTH);
  const expectedLength = expected.write(`Bearer ${TOKEN}`, 'latin1');
  const given = Buffer.alloc(WIDTH);
  const { running, done, finish } = eventClaims();
  // The receiver's two media types (Fastify's own parser for application/json): Fastify answers any
  // other 415 before reading the body.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(
    'application/cloudevents+json',
    { parseAs: 'string' },
    app.getDefaultJsonParser('error', 'error'),
  );
  // Fastify's own refusals (bad JSON, 413, 415, 404) and a handler's throw, as problem+json: no
  // message of an error reaches the answer.
  app.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode < 500 ? error.statusCode : 500;
    return problem(reply, status, status === 500 ? 'Internal Server Error' : 'Request refused');
  });
  app.setNotFoundHandler((_request, reply) => problem(reply, 404, 'Not Found'));
  app.post(
    '/hook',
    {
      onRequest: (request, reply, next) => {
        const authorization = request.headers.authorization;
        given.fill(0);
        const length = typeof authorization === 'string' ? given.write(authorization, 'latin1') : -1;
        // Both compared before either decides, over the whole width.
        const same = timingSafeEqual(given, expected);
        if (same && length === expectedLength) return next();
        problem(reply, 401, 'Unauthorized', { 'WWW-Authenticate': 'Bearer' });
      },
    },
    async (request, reply) => {
      const body = request.body as Record<string, unknown> | null;
      const challenge = request.headers[CHALLENGE_HEADER];
      if (challenge !== undefined) {
        const value = body?.challenge ?? challenge;
        if (typeof value !== 'string' || !VALID_CHALLENGE.test(value))
          return problem(reply, 400, 'Bad Request');
        return { challenge: value };
      }
      if (!isCheckedEvent(body)) return problem(reply, 400, 'Bad Request');
      const { id, source, type } = body;
      const key = idempotencyKey('', source, id);
      if (running.has(key)) return problem(reply, 409, 'Conflict', { 'Retry-After': RETRY_AFTER });
      if (!done.has(key)) {
        running.add(key);
        let result: unknown;
        try {
          result = handler(body);
        } catch (error) {
          running.delete(key);
          throw error;
        }
        // A synchronous handler's answer takes no promise turn, as the receiver's does not.
        if (!(result instanceof Promise)) finish(key);
        else {
          // Held as running until the handler settles, past a timeout too: no second run beside it.
          const settled = result.then(
            () => finish(key),
            (error: unknown) => {
              running.delete(key);
              throw error;
            },
          );
          let timer: NodeJS.Timeout | undefined;
          const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, TIMEOUT_MS, 'late')));
          const first = await Promise.race([settled, late]).finally(() => clearTimeout(timer));
          if (first === 'late') {
            settled.catch(() => undefined);
            return problem(reply, 503, 'Service Unavailable', { 'Retry-After': RETRY_AFTER });
          }
        }
      }
      return { id, type, status: 'processed' };
    },
  );
  await app.ready();
  return (req, res) => app.routing(req, res);
}
