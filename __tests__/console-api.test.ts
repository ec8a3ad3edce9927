import express from 'express';
import { createEventRouter } from '../lib';
import { ConsoleApiError, ConsoleClient, signPayload } from '../lib/console';
import { createEmulator, type Emulator } from '../lib/emulator';
import { lateReceiverApp } from './support/late-receiver';
import { listen } from './support/listen';

describe('the emulator console API', () => {
  let emulator: Emulator;
  let client: ConsoleClient;
  const closers: (() => Promise<void>)[] = [];
  beforeEach(async () => {
    emulator = await createEmulator({ initialBackoffMs: 20, retryWindowMs: 1000, logger: false });
    client = new ConsoleClient({ baseUrl: emulator.url, ...emulator.account });
  });
  afterEach(async () => {
    await emulator.close();
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  async function customerApp() {
    const handled: string[] = [];
    const app = await lateReceiverApp(createEventRouter().onAny((event) => void handled.push(event.type)));
    closers.push(app.close);
    return { ...app, handled };
  }

  it('runs the whole lifecycle: create, handshake, verify, list, deliver, delete', async () => {
    const app = await customerApp();
    const created = await client.createWebhook({
      name: 'Front door',
      url: app.url,
      subscribedEvents: ['ag.access_pass.issued', 'ag.hid_org.created'],
    });
    expect(created).toMatchObject({
      name: 'Front door',
      verified: false,
      authMethod: 'bearer_token',
      url: app.url,
    });
    expect(created.privateKey).toMatch(/^whsk_/);
    app.useToken(created.privateKey);

    const verified = await client.waitUntilVerified(created.id, { timeoutMs: 3000, intervalMs: 20 });
    expect(verified).toMatchObject({ id: created.id, verified: true });
    expect(verified).not.toHaveProperty('privateKey');
    expect(await client.verifyWebhook(created.id)).toEqual({ id: created.id, verified: true, status: 200 });

    const { event } = emulator.emit('ag.access_pass.issued');
    emulator.emit('ag.landing_page.created');
    await emulator.waitForDeliveries({ eventId: event.id });
    expect(app.handled).toEqual(['ag.access_pass.issued']);

    await client.deleteWebhook(created.id);
    expect((await client.listWebhooks()).webhooks).toEqual([]);
    expect(emulator.emit('ag.hid_org.created').deliveries).toEqual([]);
    await expect(client.deleteWebhook(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it('verify answers 202 and re-sends the challenge to an unverified webhook', async () => {
    let echo = false;
    const app = express();
    app.use(express.json());
    app.post('/h', (req, res) => void res.json({ challenge: echo ? req.body.challenge : 'no' }));
    const server = await listen(app);
    closers.push(server.close);
    const created = await client.createWebhook({
      name: 'late',
      url: `${server.url}/h`,
      subscribedEvents: ['ag.hid_org.created'],
    });
    await emulator.waitForIdle();
    expect((await client.listWebhooks()).webhooks[0]?.verified).toBe(false);
    echo = true;
    expect(await client.verifyWebhook(created.id)).toEqual({ id: created.id, verified: false, status: 202 });
    await expect(
      client.waitUntilVerified(created.id, { timeoutMs: 2000, intervalMs: 20 }),
    ).resolves.toMatchObject({ verified: true });
  });

  it('paginates with the spec defaults (page 1, 50 per page) and a maximum of 100', async () => {
    for (let i = 0; i < 120; i++)
      emulator.backend.create(emulator.account.accountId, {
        name: `w${i}`,
        url: 'http://127.0.0.1:9/h',
        subscribedEvents: ['ag.hid_org.created'],
      });
    await emulator.waitForIdle();
    const first = await client.listWebhooks();
    expect(first).toMatchObject({ page: 1, perPage: 50, totalCount: 120, totalPages: 3, hasMore: true });
    expect(first.webhooks).toHaveLength(50);
    const last = await client.listWebhooks({ page: 2, perPage: 100 });
    expect(last.webhooks).toHaveLength(20);
    expect(last.hasMore).toBe(false);
    const all: string[] = [];
    for await (const webhook of client.iterateWebhooks()) all.push(webhook.name);
    expect(all).toHaveLength(120);

    const sig = signPayload('{}', emulator.account.secretKey);
    const res = await fetch(`${emulator.url}/v1/console/webhooks?per_page=101&sig_payload=%7B%7D`, {
      headers: { 'X-ACCT-ID': emulator.account.accountId, 'X-PAYLOAD-SIG': sig },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ field: 'per_page' });
  });

  describe('authentication (spec 5.1)', () => {
    const body = '{"name":"n","url":"https://example.com/h","subscribed_events":["ag.hid_org.created"]}';
    it.each<
      [
        string,
        (
          secret: string,
          account: string,
        ) => { path: string; method: string; headers: Record<string, string>; body?: string },
      ]
    >([
      [
        'no X-ACCT-ID',
        (s) => ({
          path: '/v1/console/webhooks?sig_payload=%7B%7D',
          method: 'GET',
          headers: { 'X-PAYLOAD-SIG': signPayload('{}', s) },
        }),
      ],
      [
        'an unknown account',
        (s) => ({
          path: '/v1/console/webhooks?sig_payload=%7B%7D',
          method: 'GET',
          headers: { 'X-ACCT-ID': 'acct_other', 'X-PAYLOAD-SIG': signPayload('{}', s) },
        }),
      ],
      [
        'no signature',
        (_s, a) => ({
          path: '/v1/console/webhooks?sig_payload=%7B%7D',
          method: 'GET',
          headers: { 'X-ACCT-ID': a },
        }),
      ],
      [
        'a signature with the wrong key',
        (_s, a) => ({
          path: '/v1/console/webhooks?sig_payload=%7B%7D',
          method: 'GET',
          headers: { 'X-ACCT-ID': a, 'X-PAYLOAD-SIG': signPayload('{}', 'wrong') },
        }),
      ],
      [
        'GET without sig_payload',
        (s, a) => ({
          path: '/v1/console/webhooks',
          method: 'GET',
          headers: { 'X-ACCT-ID': a, 'X-PAYLOAD-SIG': signPayload('{}', s) },
        }),
      ],
      [
        'a POST signed over other bytes',
        (s, a) => ({
          path: '/v1/console/webhooks',
          method: 'POST',
          headers: {
            'X-ACCT-ID': a,
            'X-PAYLOAD-SIG': signPayload(JSON.stringify(JSON.parse(body)), s).replace(/^./, (c) =>
              c === '0' ? '1' : '0',
            ),
            'Content-Type': 'application/json',
          },
          body: `${body} `,
        }),
      ],
      [
        'a POST whose body was re-serialized after signing',
        (s, a) => ({
          path: '/v1/console/webhooks',
          method: 'POST',
          headers: {
            'X-ACCT-ID': a,
            'X-PAYLOAD-SIG': signPayload(body, s),
            'Content-Type': 'application/json',
          },
          body: JSON.stringify(JSON.parse(body), null, 2),
        }),
      ],
      [
        'a DELETE signed for another payload',
        (s, a) => ({
          path: '/v1/console/webhooks/wh_1?sig_payload=%7B%7D',
          method: 'DELETE',
          headers: { 'X-ACCT-ID': a, 'X-PAYLOAD-SIG': signPayload('{"x":1}', s) },
        }),
      ],
    ])('answers 401 problem+json to %s', async (_name, build) => {
      const request = build(emulator.account.secretKey, emulator.account.accountId);
      const res = await fetch(`${emulator.url}${request.path}`, {
        method: request.method,
        headers: request.headers,
        body: request.body,
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.text()).not.toContain(emulator.account.secretKey);
      expect(emulator.listWebhooks()).toEqual([]);
    });

    it('the client sees a 401 as ConsoleApiError', async () => {
      const wrong = new ConsoleClient({
        baseUrl: emulator.url,
        accountId: emulator.account.accountId,
        secretKey: 'not-the-secret',
      });
      await expect(wrong.listWebhooks()).rejects.toBeInstanceOf(ConsoleApiError);
      await expect(wrong.listWebhooks()).rejects.toMatchObject({ status: 401 });
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['no name', { url: 'https://example.com/h', subscribed_events: ['ag.hid_org.created'] }, 'name'],
    [
      'http to a remote host',
      { name: 'n', url: 'http://example.com/h', subscribed_events: ['ag.hid_org.created'] },
      'url',
    ],
    ['no events', { name: 'n', url: 'https://example.com/h', subscribed_events: [] }, 'subscribed_events'],
    [
      'an unknown event',
      { name: 'n', url: 'https://example.com/h', subscribed_events: ['ag.nope'] },
      'subscribed_events[0]',
    ],
    [
      'an unknown auth method',
      {
        name: 'n',
        url: 'https://example.com/h',
        auth_method: 'basic',
        subscribed_events: ['ag.hid_org.created'],
      },
      'auth_method',
    ],
  ])('answers 400 naming the field to a create with %s', async (_name, payload, field) => {
    const body = JSON.stringify(payload);
    const res = await fetch(`${emulator.url}/v1/console/webhooks`, {
      method: 'POST',
      headers: {
        'X-ACCT-ID': emulator.account.accountId,
        'X-PAYLOAD-SIG': signPayload(body, emulator.account.secretKey),
        'Content-Type': 'application/json',
      },
      body,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ field });
  });

  it('answers 404 to verify of an unknown webhook', async () => {
    await expect(client.verifyWebhook('wh_missing')).rejects.toMatchObject({ status: 404 });
  });
});
