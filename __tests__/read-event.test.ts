import { createEventRouter, createFetchHandler } from '../lib';
import { buildEvent } from '../lib/testing';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS } from './support/doors';
import { createEventReader } from '../lib/core/event/read-event';
import type { WebhookRequest } from '../lib/core/webhook-request';
import { resolveLogger } from '../lib/logger';
import { queuedDelivery } from '../lib/inbox/queued-delivery';
import { readQueuedEvent } from '../lib/inbox/worker/read-queued-event';

const TOKEN = 'tok_read_event';

describe.each(DOORS)('reading the event through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it('reads a structured event as structured even with ce- headers beside it', async () => {
    const { d, seen } = await start({});
    const event = buildEvent('ag.landing_page.created', { landing_page_id: 'lp_1' });
    const answer = await d.send(
      tokenDelivery(TOKEN, event, {
        'ce-specversion': '1.0',
        'ce-id': 'other',
        'ce-source': 's',
        'ce-type': 't',
      }),
    );
    expect(answer.status).toBe(200);
    expect(seen.map((e) => [e.id, 'landing_page_id' in e.data ? e.data.landing_page_id : undefined])).toEqual(
      [[event.id, 'lp_1']],
    );
  });

  it('drops a __proto__ key inside data_base64, as it does in data', async () => {
    const { d, seen } = await start({});
    const data = '{"landing_page_id":"lp","__proto__":{"injected":"yes"}}';
    const event = {
      ...buildEvent('ag.landing_page.created'),
      data: undefined,
      data_base64: Buffer.from(data).toString('base64'),
    };
    expect((await d.send(tokenDelivery(TOKEN, event))).status).toBe(200);
    const received = seen[0]?.data as Record<string, unknown>;
    expect([received.landing_page_id, received.injected, Object.getPrototypeOf(received)]).toEqual([
      'lp',
      undefined,
      Object.prototype,
    ]);
  });
});

describe('reading the event: a body already read', () => {
  it('answers 400 body-consumed to a Fetch request whose body was already read', async () => {
    const handler = createFetchHandler({ bearerTokens: [TOKEN], router: createEventRouter(), logger: false });
    const request = new Request('http://app.local/webhooks', {
      method: 'POST',
      ...tokenDelivery(TOKEN, buildEvent('ag.hid_org.created')),
    });
    await request.text();
    const response = await handler(request);
    expect([response.status, ((await response.json()) as { type: string }).type]).toEqual([
      400,
      'urn:service-webhooks:problem:body-consumed',
    ]);
  });
});

describe('reading the event: the body text kept for an inbox (keepText)', () => {
  const event = buildEvent('ag.landing_page.created', { landing_page_id: 'lp_1' });
  const structured = { 'content-type': 'application/cloudevents+json; charset=utf-8' };
  const binary = {
    'content-type': 'application/json',
    'ce-specversion': '1.0',
    'ce-id': 'evt_binary_text',
    'ce-source': event.source,
    'ce-type': event.type,
  };
  function request(
    headers: Record<string, string>,
    body: string,
    parsed?: { value: unknown },
  ): WebhookRequest {
    return {
      method: 'POST',
      header: (name) => headers[name],
      hasHeaderPrefix: (prefix) => Object.keys(headers).some((n) => n.startsWith(prefix)),
      body: { hasBody: true, parsed, read: async () => Buffer.from(body) },
    };
  }
  const read = (keepText: boolean, r: WebhookRequest) =>
    createEventReader({
      limit: 1 << 20,
      bodyTimeoutMs: 1000,
      validation: 'lenient',
      log: resolveLogger(false, 'test'),
      keepText,
    })(r);
  const text = JSON.stringify(event, null, 2);

  it("returns the body's own text, byte for byte, in structured mode", async () => {
    expect((await read(true, request(structured, text))).text).toBe(text);
  });

  it.each([
    ['a reader not asked to keep it', false, request(structured, text)],
    ['binary mode (the body is the data alone)', true, request(binary, JSON.stringify(event.data))],
    ['a body another parser read', true, request(structured, text, { value: JSON.parse(text) })],
    [
      'a body spelling __proto__ (the parse dropped it)',
      true,
      request(structured, text.replace('"landing_page_id"', '"__proto__": {"x": 1}, "landing_page_id"')),
    ],
    ['a body with a \\u escape', true, request(structured, text.replace('lp_1', 'lp_\\u0031'))],
  ])('keeps no text for %s', async (_name, keepText, r) => {
    const got = await read(keepText, r);
    expect(got.event.type).toBe(event.type);
    expect(got.text).toBeUndefined();
  });

  // What the worker reads from the kept text is what the receiver checked: no byte or number the
  // receiver's read dropped reaches the handlers another way.
  it.each([
    ['a byte order mark before it', `\ufeff${text}`],
    ['a number JSON.stringify cannot write (1e400, -0)', text.replace('"lp_1"', '"lp_1","n":1e400,"z":-0')],
  ])('keeps a text the worker reads as the receiver did: %s', async (_name, body) => {
    const got = await read(true, request(structured, body));
    expect(got.text).toBeDefined();
    const queued = queuedDelivery('k', got.event, () => undefined, null, got.text);
    const worker = readQueuedEvent(queued);
    expect(worker.raw).toEqual(got.event.raw);
    expect([worker.id, worker.type, worker.source, worker.data]).toEqual([
      got.event.id,
      got.event.type,
      got.event.source,
      got.event.data,
    ]);
  });
});
