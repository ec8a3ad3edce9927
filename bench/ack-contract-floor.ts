// The contract's floor on BullMQ, for the ack bench's `--floor` rows (issue 36): a hand-written
// node:http server that does only what a receiver with an inbox must do before it acknowledges —
// the token compared in constant time before the body is read, the CloudEvents required attributes
// checked, the redelivery-safe job id of (scope, source, id), a queued delivery that keeps the
// envelope's text and no credential, the inbox's job options, an answer with its length — and
// nothing a framework or a library adds. Where the bare `queue.add` server is what the engine costs,
// this is what the contract costs: ours can only come near it, and the bare row can only be met
// beyond it by doing less than the contract.
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { fastStringPrototype } from '../lib/fast-string-prototype';
import { jobIdFor } from '../lib/inbox/queued-delivery';
import { TOKEN } from './bench-events';

/** The kept request headers, as the inbox keeps them (never credentials). */
const KEPT = ['user-agent', 'content-type', 'traceparent', 'tracestate', 'x-service-webhook-attempt'];
/**
 * The job options the BullMQ inbox gives every job on its own queue (lib/bullmq/bullmq-inbox.ts): the
 * retention is its workers'.
 */
const JOB_OPTIONS = { attempts: 13, backoff: { type: 'service-webhooks' } };

const refuse = (res: http.ServerResponse, status: number) => {
  res.writeHead(status, { 'Content-Type': 'application/problem+json' });
  res.end(JSON.stringify({ status }));
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
  const expected = Buffer.from(`Bearer ${TOKEN}`);
  return {
    listen: (req, res) => {
      const given = Buffer.from(req.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return refuse(res, 401);
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const event = JSON.parse(text) as Record<string, unknown>;
        const { id, source, type, time } = event;
        if (
          event.specversion !== '1.0' ||
          typeof id !== 'string' ||
          typeof source !== 'string' ||
          typeof type !== 'string'
        )
          return refuse(res, 400);
        const key = `default\u0000${source}\u0000${id}`;
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
        queue.add(type, delivery, { ...JOB_OPTIONS, jobId: jobIdFor(key) }).then(
          () => {
            const body = JSON.stringify({ id, status: 'queued' });
            res.writeHead(200, {
              'Content-Type': 'application/json; charset=utf-8',
              'Content-Length': Buffer.byteLength(body),
            });
            res.end(body);
          },
          () => refuse(res, 503),
        );
      });
    },
    close: () => queue.close(),
  };
}
