import { CloudEvent, emitterFor, httpTransport, HTTP, Mode } from 'cloudevents';
import express from 'express';
import request from 'supertest';
import {
  createEventRouter,
  EVENT_TYPES,
  webhookReceiver,
  type AnyWebhookEvent,
  type EventType,
} from 'service-webhooks';
import { buildEvent, sendEvent, type DeliveryEnvelope } from 'service-webhooks/testing';
import { listen } from './support/listen';

// A CloudEvents binary-mode request (attributes in ce- headers, data as the body) is what the SDK's
// default emitter sends. The receiver accepts it as the same event as its structured twin.
const TOKEN = 'tok_binary';

function recordingApp() {
  const received: AnyWebhookEvent[] = [];
  const router = createEventRouter().on('ag.*', (event) => void received.push(event));
  const app = express().use(webhookReceiver({ bearerTokens: [TOKEN], router, logger: false }));
  return { app, received };
}

/** The SDK's own binary encoding of an envelope: headers and body exactly as its emitter sends them. */
function binary(envelope: DeliveryEnvelope) {
  const message = HTTP.binary(new CloudEvent({ ...envelope }));
  const headers = Object.fromEntries(Object.entries(message.headers).map(([k, v]) => [k, String(v)]));
  return { headers, body: message.body as string };
}

function sendBinary(app: express.Express, envelope: DeliveryEnvelope, token: string | null = TOKEN) {
  const { headers, body } = binary(envelope);
  const test = request(app).post('/').set(headers);
  if (token !== null) test.set('Authorization', `Bearer ${token}`);
  return test.send(body);
}

const cases = EVENT_TYPES.flatMap((type) => (['A', 'B'] as const).map((layout) => [type, layout] as const));

it.each(cases)(
  '%s in layout %s: the same event in binary mode as in structured mode',
  async (type, layout) => {
    const { app, received } = recordingApp();
    const envelope = buildEvent<EventType, 'A' | 'B'>(type, {}, { layout });
    expect(binary(envelope).headers['ce-specversion']).toBe('1.0');
    await sendBinary(app, envelope).expect(200, { id: envelope.id, type, status: 'processed' });
    // The structured twin of the same event is a duplicate: one event, whichever mode carried it.
    await sendEvent(app, envelope, { token: TOKEN }).expect(200, {
      id: envelope.id,
      type,
      status: 'duplicate',
    });
    expect(received).toHaveLength(1);
    const [event] = received;
    const { raw: _raw, ...normalized } = event as AnyWebhookEvent;
    const structured = recordingApp();
    await sendEvent(structured.app, envelope, { token: TOKEN }).expect(200);
    const { raw: _structuredRaw, ...expected } = structured.received[0] as AnyWebhookEvent;
    expect(normalized).toEqual(expected);
  },
);

it("accepts the SDK's default emitter (binary mode) over a real connection", async () => {
  const { app, received } = recordingApp();
  const server = await listen(app);
  try {
    const emit = emitterFor(httpTransport(server.url), { mode: Mode.BINARY });
    const envelope = buildEvent('ag.access_pass.issued', { full_name: 'Ada Lovelace' });
    const response = (await emit(new CloudEvent({ ...envelope }), {
      headers: { Authorization: `Bearer ${TOKEN}` },
    })) as { body: string };
    expect(JSON.parse(response.body)).toEqual({ id: envelope.id, type: envelope.type, status: 'processed' });
    expect(
      received.map((e) => [e.id, e.layout, 'full_name' in e.data ? e.data.full_name : undefined]),
    ).toEqual([[envelope.id, 'A', 'Ada Lovelace']]);
  } finally {
    await server.close();
  }
});

describe('binary mode is checked like structured mode', () => {
  const envelope = buildEvent('ag.hid_org.created');

  it('needs the bearer token, and refuses before reading the body', async () => {
    const { app, received } = recordingApp();
    await sendBinary(app, envelope, null).expect(401);
    await sendBinary(app, envelope, 'wrong').expect(401);
    expect(received).toEqual([]);
  });

  const broken: [string, number, (headers: Record<string, string>) => void][] = [
    ['without ce-type', 400, (h) => delete h['ce-type']],
    ['without ce-id', 400, (h) => delete h['ce-id']],
    ['with ce-specversion 0.3', 400, (h) => (h['ce-specversion'] = '0.3')],
    ['with a text/plain body', 415, (h) => (h['content-type'] = 'text/plain')],
  ];

  it.each(broken)(
    'refuses a binary request %s with %d, and runs no handler',
    async (_name, status, mutate) => {
      const { app, received } = recordingApp();
      const { headers, body } = binary(envelope);
      mutate(headers);
      const res = await request(app)
        .post('/')
        .set(headers)
        .set('Authorization', `Bearer ${TOKEN}`)
        .send(body)
        .expect(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(received).toEqual([]);
    },
  );

  it('decodes percent-encoded header values (CloudEvents HTTP binding 3.1.3.2)', async () => {
    const { app, received } = recordingApp();
    const { headers, body } = binary(buildEvent('ag.hid_org.created', {}, { origin: 'eu' }));
    headers['ce-source'] = '/service/eu%20west';
    await request(app).post('/').set(headers).set('Authorization', `Bearer ${TOKEN}`).send(body).expect(200);
    expect(received[0]?.source).toBe('/service/eu west');
  });
});
