import http from 'node:http';
import net from 'node:net';
import {
  createEventRouter,
  createFetchHandler,
  createNodeHandler,
  type AnyWebhookEvent,
  type ReceiverOptions,
} from '../lib';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';
import { DOORS, type OpenDoor, type RawRequest } from './support/doors';

// Bugs a hostile review of the core found, each fixed; every test here failed before its fix.
const TOKEN = 'tok_review';
const delivery = (event: unknown, extra: Record<string, string> = {}): RawRequest => ({
  headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}`, ...extra },
  body: JSON.stringify(event),
});

describe.each(DOORS)('review findings through $name', (door) => {
  let open: OpenDoor | undefined;
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });
  async function start(options: Partial<ReceiverOptions>) {
    const seen: AnyWebhookEvent[] = [];
    const router = createEventRouter().onAny((event) => void seen.push(event));
    open = await door.open({ bearerTokens: [TOKEN], router, logger: false, ...options });
    return { d: open, seen };
  }

  it('sees a token list the app updates in place: the rotated token works, the revoked one does not', async () => {
    const list = ['tok_old'];
    const { d } = await start({ bearerTokens: () => list });
    const send = (token: string) =>
      d.send(delivery(buildEvent('ag.hid_org.created'), { authorization: `Bearer ${token}` }));
    expect((await send('tok_old')).status).toBe(200);
    list.splice(0, 1, 'tok_new');
    expect([(await send('tok_old')).status, (await send('tok_new')).status]).toEqual([401, 200]);
  });

  it('bounds an async token function that never settles: 503 within storeTimeoutMs', async () => {
    const { d, seen } = await start({
      bearerTokens: () => new Promise<string[]>(() => undefined),
      storeTimeoutMs: 100,
    });
    const answer = await d.send(delivery(buildEvent('ag.hid_org.created')));
    expect([answer.status, answer.headers['retry-after']]).toEqual([503, '30']);
    expect(seen).toEqual([]);
    await expect(d.drain({ timeoutMs: 1000 })).resolves.toMatchObject({ drained: true, requests: 0 });
  });

  it('refuses an event sent with the challenge header instead of echoing it unprocessed', async () => {
    const { d, seen } = await start({});
    const answer = await d.send(
      delivery(buildEvent('ag.hid_org.created'), { 'x-service-webhook-challenge': 'abc' }),
    );
    expect([answer.status, answer.text.includes('abc')]).toEqual([400, false]);
    expect(seen).toEqual([]);
  });

  it('reads a structured event as structured even with ce- headers beside it', async () => {
    const { d, seen } = await start({});
    const event = buildEvent('ag.landing_page.created', { landing_page_id: 'lp_1' });
    const answer = await d.send(
      delivery(event, { 'ce-specversion': '1.0', 'ce-id': 'other', 'ce-source': 's', 'ce-type': 't' }),
    );
    expect(answer.status).toBe(200);
    expect(seen.map((e) => [e.id, 'landing_page_id' in e.data ? e.data.landing_page_id : undefined])).toEqual(
      [[event.id, 'lp_1']],
    );
  });

  it('keeps ids with different lone surrogates apart', async () => {
    const { d, seen } = await start({});
    const base = { ...buildEvent('ag.hid_org.created'), source: `/service/${'s'.repeat(200)}` };
    const answers = [
      await d.send(delivery({ ...base, id: '\ud800' })),
      await d.send(delivery({ ...base, id: '\udfff' })),
    ];
    expect(answers.map((a) => JSON.parse(a.text).status)).toEqual(['unhandled', 'unhandled']);
    expect(seen).toHaveLength(2);
  });

  it('drops a __proto__ key inside data_base64, as it does in data', async () => {
    const { d, seen } = await start({});
    const data = '{"landing_page_id":"lp","__proto__":{"injected":"yes"}}';
    const event = {
      ...buildEvent('ag.landing_page.created'),
      data: undefined,
      data_base64: Buffer.from(data).toString('base64'),
    };
    expect((await d.send(delivery(event))).status).toBe(200);
    const received = seen[0]?.data as Record<string, unknown>;
    expect([received.landing_page_id, received.injected, Object.getPrototypeOf(received)]).toEqual([
      'lp',
      undefined,
      Object.prototype,
    ]);
  });
});

describe('review findings in one door', () => {
  it('refuses two Authorization lines through node:http as the Fetch API does (joined), whichever is right', async () => {
    const handler = createNodeHandler({ bearerTokens: [TOKEN], router: createEventRouter(), logger: false });
    const server = http.createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const body = JSON.stringify(buildEvent('ag.hid_org.created'));
    const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.write(
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Authorization: Bearer wrong\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    for (let i = 0; i < 100 && !received.includes('\r\n\r\n'); i++)
      await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    server.close();
    expect(received).toMatch(/^HTTP\/1.1 401/);
  });

  it('answers 400 body-consumed to a Fetch request whose body was already read', async () => {
    const handler = createFetchHandler({ bearerTokens: [TOKEN], router: createEventRouter(), logger: false });
    const request = new Request('http://app.local/webhooks', {
      method: 'POST',
      ...delivery(buildEvent('ag.hid_org.created')),
    });
    await request.text();
    const response = await handler(request);
    expect([response.status, ((await response.json()) as { type: string }).type]).toEqual([
      400,
      'urn:service-webhooks:problem:body-consumed',
    ]);
  });
});
