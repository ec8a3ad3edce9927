import { HTTP, CloudEvent } from 'cloudevents';
import { createEventRouter, type AnyWebhookEvent, RetryLater, type ReceiverOptions } from '../../lib';
import { buildEvent, buildUnknownEvent, DELIVERY_HEADERS } from '../../lib/testing';
import type { RawRequest } from './doors';

/**
 * The receiver contract as a table: one request, the answer every door must give. The adapter
 * contract runs it through Express, node:http and Fetch in node; the runtime test through the Fetch
 * door on Bun and Deno.
 */
export const TOKEN = 'tok_contract';
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function delivery(
  event: unknown,
  extra: Record<string, string> = {},
  body?: string | Uint8Array,
): RawRequest {
  return {
    headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}`, ...extra },
    body: body ?? JSON.stringify(event),
  };
}

/** Handlers that count runs by event id, and fail, refuse or hang on cue (by the event's `title`). */
export function countingRouter() {
  const runs = new Map<string, number>();
  const handler = async (event: AnyWebhookEvent) => {
    runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
    const cue = (event.data as { title?: string | null }).title;
    if (cue === 'fail') throw new Error('secret=hunter2 at /srv/app.js');
    if (cue === 'retry-later') throw new RetryLater('downstream is down', { retryAfterSeconds: 7 });
    if (cue === 'slow') await sleep(300);
  };
  return { router: createEventRouter().on('ag.*', handler).onUnhandled(handler), runs };
}

export const issued = (overrides: Record<string, unknown> = {}, id?: string) =>
  buildEvent('ag.access_pass.issued', overrides, id === undefined ? {} : { id });
const invalidUtf8 = Buffer.concat([
  Buffer.from('{"specversion":"1.0","id":"x'),
  Buffer.from([0xff, 0xfe]),
  Buffer.from('"}'),
]);
export const binaryMode = (() => {
  const event = issued({}, 'evt_binary');
  const message = HTTP.binary(new CloudEvent({ ...event, data: event.data }));
  const headers = Object.fromEntries(
    Object.entries(message.headers).map(([k, v]) => [k.toLowerCase(), String(v)]),
  );
  return { headers: { ...headers, authorization: `Bearer ${TOKEN}` }, body: message.body as string };
})();

export interface Row {
  name: string;
  request: RawRequest;
  status: number;
  /** The problem slug, for error answers. */
  slug?: string;
  /** The acknowledgement's `status`, for 200 answers. */
  outcome?: 'processed' | 'unhandled' | 'duplicate';
  headers?: Record<string, string | RegExp>;
  options?: Partial<ReceiverOptions>;
}

export const ROWS: Row[] = [
  { name: 'a valid delivery', request: delivery(issued()), status: 200, outcome: 'processed' },
  {
    name: 'layout B',
    request: delivery(buildEvent('ag.access_pass.devices.added', {}, { layout: 'B' })),
    status: 200,
    outcome: 'processed',
  },
  { name: 'binary mode', request: binaryMode, status: 200, outcome: 'processed' },
  {
    name: 'a future type of a known family, without the fields its family carries',
    request: delivery(buildUnknownEvent('ag.access_pass.transferred', { devices: undefined })),
    status: 200,
    outcome: 'unhandled',
  },
  {
    name: 'GET',
    request: { method: 'GET', headers: { authorization: `Bearer ${TOKEN}` } },
    status: 405,
    slug: 'method-not-allowed',
    headers: { allow: 'POST' },
  },
  {
    name: 'no token',
    request: delivery(issued(), { authorization: '' }),
    status: 401,
    slug: 'missing-token',
    headers: { 'www-authenticate': /^Bearer realm=/ },
  },
  {
    name: 'a wrong token',
    request: delivery(issued(), { authorization: 'Bearer nope' }),
    status: 401,
    slug: 'invalid-token',
    headers: { 'www-authenticate': /invalid_token/ },
  },
  {
    name: 'a malformed Authorization',
    request: delivery(issued(), { authorization: 'Basic abc' }),
    status: 401,
    slug: 'invalid-token',
  },
  {
    name: 'a body over the limit',
    request: delivery(issued({ metadata: { pad: 'x'.repeat(3000) } })),
    status: 413,
    slug: 'payload-too-large',
    options: { limit: 2048 },
  },
  {
    name: 'text/plain',
    request: delivery(issued(), { 'content-type': 'text/plain' }),
    status: 415,
    slug: 'unsupported-media-type',
  },
  {
    name: 'a latin1 charset',
    request: delivery(issued(), { 'content-type': 'application/json; charset=latin1' }),
    status: 415,
    slug: 'unsupported-media-type',
  },
  {
    name: 'Content-Encoding: gzip',
    request: delivery(issued(), { 'content-encoding': 'gzip' }),
    status: 415,
    slug: 'unsupported-media-type',
  },
  { name: 'invalid JSON', request: delivery(null, {}, '{"specversion":'), status: 400, slug: 'invalid-json' },
  { name: 'an empty body', request: delivery(null, {}, ''), status: 400, slug: 'empty-body' },
  { name: 'invalid UTF-8', request: delivery(null, {}, invalidUtf8), status: 400, slug: 'invalid-utf8' },
  { name: 'a batch', request: delivery([issued()]), status: 400, slug: 'not-a-cloudevent' },
  {
    name: 'no specversion',
    request: delivery({ ...issued(), specversion: undefined }),
    status: 400,
    slug: 'invalid-cloudevent',
  },
  ...[' ', '\u0000', '\t\r\n', '\u0085'].map((id) => ({
    name: `an id of only ${JSON.stringify(id)}`,
    request: delivery({ ...issued(), id }),
    status: 400,
    slug: 'invalid-cloudevent',
  })),
  {
    name: 'a source of only spaces',
    request: delivery({ ...issued(), source: '   ' }),
    status: 400,
    slug: 'invalid-cloudevent',
  },
  {
    name: 'a bad extension name',
    request: delivery({ ...issued(), 'Bad-Name': 1 }),
    status: 400,
    slug: 'invalid-cloudevent',
  },
  {
    name: 'invalid UTF-8 in data_base64',
    request: delivery({
      ...issued(),
      data: undefined,
      data_base64: Buffer.from([0xc0, 0xaf]).toString('base64'),
    }),
    status: 400,
    slug: 'invalid-utf8',
  },
  {
    name: 'a mixed layout',
    // A layout B name in a layout A event: the test kit refuses it, so the escape hatch builds it.
    request: delivery(buildUnknownEvent('ag.access_pass.issued', { access_pass_id: 'ap_1' })),
    status: 400,
    slug: 'mixed-layout',
  },
  {
    name: 'a broken per-type rule',
    request: delivery(issued({ details: undefined })),
    status: 400,
    slug: 'event-rule-violated',
  },
  {
    name: 'a failing handler',
    request: delivery(issued({ title: 'fail' })),
    status: 500,
    slug: 'handler-failed',
  },
  {
    name: 'a handler asking to retry later',
    request: delivery(issued({ title: 'retry-later' })),
    status: 503,
    slug: 'retry-later',
    headers: { 'retry-after': '7' },
  },
  {
    name: 'a handler past timeoutMs',
    request: delivery(issued({ title: 'slow' })),
    status: 503,
    slug: 'handler-timeout',
    headers: { 'retry-after': '30' },
    options: { timeoutMs: 50 },
  },
];
