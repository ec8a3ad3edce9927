// The contract's floor on Fastify, for the receiver bench's Fastify rows (issue 34): a hand-written
// Fastify route that does only what a receiver must do before it answers 200 — the token compared in
// constant time before the body is read, one media type, the body bounded, the JSON parsed with
// Fastify's own prototype-poisoning guard, the CloudEvents required attributes checked, each event run
// once (a bounded first-in map of (source, id), claimed before the handler and marked done after) —
// and nothing else: no per-type data checks, no leases, no retention, no metrics. Where the plain
// JSON route is what Fastify costs, this is what the contract costs on Fastify.
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import Fastify from 'fastify';
import { TOKEN } from './bench-events';

/** The receiver's defaults: `limit` '1mb', MemoryStore `maxEntries` 100 000. */
const LIMIT = 1024 * 1024;
const MAX_ENTRIES = 100_000;
const RUNNING = 1;
const DONE = 2;

const problem = (status: number) => ({ type: 'about:blank', status });

/** The floor's request listener. */
export async function fastifyContractFloor(): Promise<http.RequestListener> {
  const app = Fastify({ bodyLimit: LIMIT });
  const expected = Buffer.from(`Bearer ${TOKEN}`);
  const seen = new Map<string, number>();
  const handler = (_event: unknown) => undefined;
  // The receiver's two media types (Fastify's own parser for application/json): Fastify answers any
  // other 415 before reading the body.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(
    'application/cloudevents+json',
    { parseAs: 'string' },
    app.getDefaultJsonParser('error', 'error'),
  );
  app.post(
    '/hook',
    {
      onRequest: (request, reply, done) => {
        const given = Buffer.from(request.headers.authorization ?? '');
        if (given.length === expected.length && timingSafeEqual(given, expected)) return done();
        void reply.code(401).type('application/problem+json').send(problem(401));
      },
    },
    async (request, reply) => {
      const event = request.body as Record<string, unknown>;
      const { id, source, type } = event;
      if (
        event.specversion !== '1.0' ||
        typeof id !== 'string' ||
        id === '' ||
        typeof source !== 'string' ||
        source === '' ||
        typeof type !== 'string' ||
        type === ''
      ) {
        void reply.code(400).type('application/problem+json');
        return problem(400);
      }
      const key = `${source}\u0000${id}`;
      const state = seen.get(key);
      if (state === RUNNING) {
        void reply.code(409).type('application/problem+json');
        return problem(409);
      }
      if (state === undefined) {
        seen.set(key, RUNNING);
        if (seen.size > MAX_ENTRIES) seen.delete(seen.keys().next().value as string);
        try {
          await handler(event);
        } catch (error) {
          seen.delete(key);
          throw error;
        }
        seen.set(key, DONE);
      }
      return { id, type, status: 'processed' };
    },
  );
  await app.ready();
  return (req, res) => app.routing(req, res);
}
