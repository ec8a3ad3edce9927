import http from 'node:http';
import { createEmulator, type Emulator } from '../lib/emulator';
import { buildEvent } from '../lib/testing';

/** A raw request, so the Host header can be anything a rebinding page would send. */
function raw(
  url: string,
  path: string,
  init: { method?: string; host?: string; type?: string; body?: string },
) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const { port } = new URL(url);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: init.method ?? 'GET',
        headers: {
          Host: init.host ?? `127.0.0.1:${port}`,
          ...(init.type ? { 'Content-Type': init.type } : {}),
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

describe('the emulator control API (/_emulator) behind the web console and the CLI', () => {
  let emulator: Emulator;
  beforeEach(async () => {
    emulator = await createEmulator({ logger: false });
  });
  afterEach(() => emulator.close());

  it('answers only to a loopback Host (no DNS rebinding)', async () => {
    const res = await raw(emulator.url, '/_emulator/state', { host: 'attacker.example:80' });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ status: 403, title: 'Forbidden' });
    expect((await raw(emulator.url, '/', { host: 'evil.test' })).status).toBe(200);
  });

  it('takes changes only as JSON (no cross-site form posts)', async () => {
    const res = await raw(emulator.url, '/_emulator/events', {
      method: 'POST',
      type: 'text/plain',
      body: '{"type":"ag.hid_org.created"}',
    });
    expect(res.status).toBe(415);
    expect(emulator.events).toEqual([]);
  });

  it('refuses an unknown type with a hint, and an unknown event to resend', async () => {
    const post = (path: string, body: unknown) =>
      raw(emulator.url, path, { method: 'POST', type: 'application/json', body: JSON.stringify(body) });
    const unknown = await post('/_emulator/events', { type: 'ag.hid_org.create' });
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.body).detail).toBe(
      'Unknown event type "ag.hid_org.create"; did you mean "ag.hid_org.created"?',
    );
    expect((await post('/_emulator/events/nope/resend', {})).status).toBe(404);
  });

  it('delivers an envelope as is (POST /_emulator/deliveries), and refuses a broken one naming its field', async () => {
    const post = (body: unknown) =>
      raw(emulator.url, '/_emulator/deliveries', {
        method: 'POST',
        type: 'application/json',
        body: JSON.stringify(body),
      });
    const event = buildEvent('ag.hid_org.created', {}, { time: '2026-11-25T10:00:00.000Z' });
    expect((await post({ event, layout: 'A' })).status).toBe(201);
    expect(emulator.events).toEqual([event]);
    const broken = await post({ event: { ...event, type: 'ag.hid_org.create' }, layout: 'A' });
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.body)).toMatchObject({
      status: 400,
      detail:
        'event.type: unknown event type "ag.hid_org.create"; did you mean "ag.hid_org.created"? (spec section 6 lists them)',
    });
    expect((await post({ event, layot: 'A' })).status).toBe(400);
    expect(emulator.events).toHaveLength(1);
  });

  it('never shows a webhook token in its state', async () => {
    const webhook = await emulator.registerWebhook({
      name: 'x',
      url: 'http://127.0.0.1:9/hook',
      subscribedEvents: ['ag.hid_org.created'],
      privateKey: 'secret_token_0123456789',
    });
    const state = await raw(emulator.url, '/_emulator/state', {});
    expect(JSON.parse(state.body).webhooks).toMatchObject([{ id: webhook.id, verified: false }]);
    expect(state.body).not.toContain('secret_token_0123456789');
  });
});
