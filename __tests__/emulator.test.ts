import express from 'express';
import { createEventRouter } from '../lib';
import { createEmulator, type Emulator } from '../lib/emulator';
import { lateReceiverApp } from './support/late-receiver';
import { listen } from './support/listen';

type Recorded = { headers: Record<string, string | string[] | undefined>; body: Record<string, unknown> };

/** A bare endpoint that records what it receives and answers with `answer()`. */
async function recordingEndpoint(
  answer: (body: Record<string, unknown>, n: number) => [number, unknown] = (b) => [200, b],
) {
  const received: Recorded[] = [];
  const app = express();
  app.use(express.json({ type: () => true }));
  app.post('/hook', (req, res) => {
    received.push({ headers: req.headers, body: req.body as Record<string, unknown> });
    const [status, body] = answer(req.body as Record<string, unknown>, received.length);
    res.status(status).json(body);
  });
  const server = await listen(app);
  return { received, url: `${server.url}/hook`, close: server.close };
}

describe('emulator', () => {
  let emulator: Emulator;
  const closers: (() => Promise<void>)[] = [];
  beforeEach(async () => {
    emulator = await createEmulator({
      initialBackoffMs: 20,
      maxBackoffMs: 200,
      retryWindowMs: 2000,
      attemptTimeoutMs: 500,
      logger: false,
    });
  });
  afterEach(async () => {
    await emulator.close();
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  it('listens on 127.0.0.1', () => {
    expect(emulator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  describe('the handshake', () => {
    it('verifies a webhook that echoes the challenge, sending the spec 5.3 headers', async () => {
      const endpoint = await recordingEndpoint((body) => [200, { challenge: body.challenge }]);
      closers.push(endpoint.close);
      const webhook = await emulator.registerWebhook({
        name: 'ok',
        url: endpoint.url,
        subscribedEvents: ['ag.hid_org.created'],
      });
      expect(webhook.verified).toBe(true);
      const [handshake] = endpoint.received;
      expect(handshake?.headers['x-service-webhook-challenge']).toBe(handshake?.body.challenge);
      expect(typeof handshake?.body.challenge).toBe('string');
    });

    it.each<[string, (body: Record<string, unknown>) => [number, unknown]]>([
      ['answers a different challenge', () => [200, { challenge: 'other' }]],
      ['answers 500', (b) => [500, b]],
      ['answers 201', (b) => [201, { challenge: b.challenge }]],
      ['answers without a body', () => [200, null]],
    ])('leaves a webhook that %s unverified', async (_name, answer) => {
      const endpoint = await recordingEndpoint(answer);
      closers.push(endpoint.close);
      const webhook = await emulator.registerWebhook({
        name: 'bad',
        url: endpoint.url,
        subscribedEvents: ['ag.hid_org.created'],
      });
      expect(webhook.verified).toBe(false);
    });

    it('leaves a webhook whose answer is too large unverified', async () => {
      const endpoint = await recordingEndpoint((body) => [
        200,
        { challenge: body.challenge, pad: 'x'.repeat(100_000) },
      ]);
      closers.push(endpoint.close);
      const webhook = await emulator.registerWebhook({
        name: 'big',
        url: endpoint.url,
        subscribedEvents: ['ag.hid_org.created'],
      });
      expect(webhook.verified).toBe(false);
    });

    it('leaves a webhook whose URL refuses connections unverified', async () => {
      const endpoint = await recordingEndpoint();
      await endpoint.close();
      const webhook = await emulator.registerWebhook({
        name: 'gone',
        url: endpoint.url,
        subscribedEvents: ['ag.hid_org.created'],
      });
      expect(webhook.verified).toBe(false);
    });

    it('sends the handshake again when the URL changes, and verifies against the new URL', async () => {
      const good = await recordingEndpoint((body) => [200, { challenge: body.challenge }]);
      const bad = await recordingEndpoint(() => [404, {}]);
      closers.push(good.close, bad.close);
      const webhook = await emulator.registerWebhook({
        name: 'moving',
        url: good.url,
        subscribedEvents: ['ag.hid_org.created'],
      });
      expect((await emulator.updateWebhook(webhook.id, { url: bad.url })).verified).toBe(false);
      expect((await emulator.updateWebhook(webhook.id, { url: good.url })).verified).toBe(true);
      expect(good.received).toHaveLength(2);
      expect(bad.received).toHaveLength(1);
    });

    it('verifyWebhook answers 202 and re-sends the challenge until verified, then 200', async () => {
      let echo = false;
      const endpoint = await recordingEndpoint((body) => [
        200,
        { challenge: echo ? body.challenge : 'nope' },
      ]);
      closers.push(endpoint.close);
      const webhook = await emulator.registerWebhook({
        name: 'later',
        url: endpoint.url,
        subscribedEvents: ['ag.hid_org.created'],
      });
      echo = true;
      expect(emulator.verifyWebhook(webhook.id)).toEqual({ id: webhook.id, verified: false, status: 202 });
      await emulator.waitForIdle();
      expect(emulator.verifyWebhook(webhook.id)).toEqual({ id: webhook.id, verified: true, status: 200 });
      expect(endpoint.received).toHaveLength(2);
    });
  });

  describe('deliveries', () => {
    it('delivers to every verified subscribed webhook with its own token and the spec 5.2 headers, and to no other', async () => {
      const a = await recordingEndpoint((b) => [200, b.challenge ? { challenge: b.challenge } : {}]);
      const b = await recordingEndpoint((body) => [200, body.challenge ? { challenge: body.challenge } : {}]);
      const unverified = await recordingEndpoint(() => [200, {}]);
      closers.push(a.close, b.close, unverified.close);
      const hookA = await emulator.registerWebhook({
        name: 'a',
        url: a.url,
        subscribedEvents: ['ag.hid_org.created', 'ag.hid_org.activated'],
      });
      const hookB = await emulator.registerWebhook({
        name: 'b',
        url: b.url,
        subscribedEvents: ['ag.hid_org.created'],
      });
      await emulator.registerWebhook({
        name: 'c',
        url: unverified.url,
        subscribedEvents: ['ag.hid_org.created'],
      });
      expect(hookA.privateKey).not.toBe(hookB.privateKey);

      const created = emulator.emit('ag.hid_org.created');
      const activated = emulator.emit('ag.hid_org.activated', {}, { layout: 'B' });
      await emulator.waitForIdle();
      expect(created.deliveries.map((d) => d.webhookId).sort()).toEqual([hookA.id, hookB.id].sort());
      expect(activated.deliveries.map((d) => d.webhookId)).toEqual([hookA.id]);

      const deliveriesTo = (e: typeof a) => e.received.filter((r) => r.body.specversion === '1.0');
      expect(deliveriesTo(a).map((r) => r.body.type)).toEqual(['ag.hid_org.created', 'ag.hid_org.activated']);
      expect(deliveriesTo(b).map((r) => r.body.type)).toEqual(['ag.hid_org.created']);
      expect(unverified.received.filter((r) => r.body.specversion)).toEqual([]);
      const [first] = deliveriesTo(a);
      expect(first?.headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
      expect(first?.headers['user-agent']).toBe('Service-Webhooks/1.0');
      expect(first?.headers.authorization).toBe(`Bearer ${hookA.privateKey}`);
      expect(deliveriesTo(b)[0]?.headers.authorization).toBe(`Bearer ${hookB.privateKey}`);
      expect(deliveriesTo(a)[1]?.body).toMatchObject({ source: 'service' });
      expect(first?.body).toMatchObject({
        source: '/service/access-grid',
        dataschema: `${emulator.url}/schemas/hid_org/v1.0.2.json`,
      });
    });

    it('stops delivering to a deleted webhook', async () => {
      const endpoint = await recordingEndpoint((b) => [200, { challenge: b.challenge }]);
      closers.push(endpoint.close);
      const webhook = await emulator.registerWebhook({
        name: 'x',
        url: endpoint.url,
        subscribedEvents: ['ag.hid_org.created'],
      });
      emulator.deleteWebhook(webhook.id);
      expect(emulator.emit('ag.hid_org.created').deliveries).toEqual([]);
    });

    it('retries anything but 200/201 with growing backoff until acknowledged, recording every attempt', async () => {
      const endpoint = await recordingEndpoint((body, n) =>
        body.challenge ? [200, { challenge: body.challenge }] : [n < 4 ? 503 : 201, {}],
      );
      closers.push(endpoint.close);
      const webhook = await emulator.registerWebhook({
        name: 'flaky',
        url: endpoint.url,
        subscribedEvents: ['ag.hid_org.created'],
      });
      const { event } = emulator.emit('ag.hid_org.created');
      const [delivery] = await emulator.waitForDeliveries({ eventId: event.id });
      expect(delivery).toMatchObject({ state: 'acknowledged', attempts: 3, webhookId: webhook.id });
      const attempts = emulator.attempts.filter((a) => a.eventId === event.id);
      expect(attempts.map((a) => [a.attempt, a.status, a.outcome])).toEqual([
        [1, 503, 'retrying'],
        [2, 503, 'retrying'],
        [3, 201, 'acknowledged'],
      ]);
      const [t1, t2, t3] = attempts.map((a) => Date.parse(a.at)) as [number, number, number];
      expect(t2 - t1).toBeGreaterThanOrEqual(10);
      expect(t3 - t2).toBeGreaterThanOrEqual(20);
    });

    it('retries an attempt that times out, and drops the delivery when the window ends', async () => {
      let mode: 'slow' | 'ok' = 'ok';
      // A slow attempt is held until the test ends: it outlasts attemptTimeoutMs by construction.
      const held: express.Response[] = [];
      closers.push(async () => void held.forEach((res) => res.destroy()));
      const app = express();
      app.use(express.json({ type: () => true }));
      app.post('/hook', (req, res) => {
        if (req.body.challenge) return void res.json({ challenge: req.body.challenge });
        if (mode === 'slow') held.push(res);
        else res.sendStatus(500);
      });
      const server = await listen(app);
      closers.push(server.close);
      const short = await createEmulator({
        initialBackoffMs: 20,
        maxBackoffMs: 100,
        retryWindowMs: 400,
        attemptTimeoutMs: 150,
      });
      try {
        await short.registerWebhook({
          name: 's',
          url: `${server.url}/hook`,
          subscribedEvents: ['ag.hid_org.created', 'ag.hid_org.activated'],
        });
        mode = 'slow';
        const slow = short.emit('ag.hid_org.created');
        await short.waitForDeliveries({ eventId: slow.event.id });
        expect(short.dropped.map((d) => d.eventId)).toEqual([slow.event.id]);
        const timeouts = short.attempts.filter((a) => a.eventId === slow.event.id);
        expect(timeouts.length).toBeGreaterThan(1);
        expect(timeouts.every((a) => a.status === null && /timed out/.test(a.error ?? ''))).toBe(true);
        expect(timeouts.at(-1)?.outcome).toBe('dropped');
      } finally {
        await short.close();
      }
    });

    it('records a refused connection with its error, retried then dropped', async () => {
      const endpoint = await recordingEndpoint((b) => [200, { challenge: b.challenge }]);
      const short = await createEmulator({ initialBackoffMs: 10, retryWindowMs: 200 });
      try {
        await short.registerWebhook({
          name: 'r',
          url: endpoint.url,
          subscribedEvents: ['ag.hid_org.created'],
        });
        await endpoint.close();
        const { event } = short.emit('ag.hid_org.created');
        const [delivery] = await short.waitForDeliveries({ eventId: event.id });
        expect(delivery?.state).toBe('dropped');
        const attempts = short.attempts.filter((a) => a.eventId === event.id);
        expect(attempts.length).toBeGreaterThan(1);
        expect(attempts[0]).toMatchObject({ status: null, error: 'ECONNREFUSED', outcome: 'retrying' });
      } finally {
        await short.close();
      }
    });

    it('delivers an envelope again as the Service duplicates it; a real receiver answers duplicate', async () => {
      let runs = 0;
      const router = createEventRouter().on('ag.access_pass.issued', () => void runs++);
      const app = await lateReceiverApp(router);
      closers.push(app.close);
      const webhook = await emulator.registerWebhook({
        name: 'real',
        url: app.url,
        subscribedEvents: ['ag.access_pass.issued'],
      });
      expect(webhook.verified).toBe(true);
      app.useToken(webhook.privateKey);
      const { event } = emulator.emit('ag.access_pass.issued');
      await emulator.waitForDeliveries({ eventId: event.id });
      emulator.deliver(event);
      await emulator.waitForDeliveries({ eventId: event.id, count: 2 });
      expect(runs).toBe(1);
      expect(emulator.attempts.filter((a) => a.eventId === event.id).map((a) => a.status)).toEqual([
        200, 200,
      ]);
    });

    it('refuses subscriptions to types outside the catalogue', async () => {
      await expect(
        emulator.registerWebhook({
          name: 'x',
          url: 'http://127.0.0.1:9',
          subscribedEvents: ['ag.nope' as never],
        }),
      ).rejects.toThrow(/event types of the catalogue/);
    });
  });

  it('waitForDeliveries rejects with what is pending when it times out', async () => {
    const endpoint = await recordingEndpoint((b) =>
      b.challenge ? [200, { challenge: b.challenge }] : [500, {}],
    );
    closers.push(endpoint.close);
    await emulator.registerWebhook({
      name: 'x',
      url: endpoint.url,
      subscribedEvents: ['ag.hid_org.created'],
    });
    const { event } = emulator.emit('ag.hid_org.created');
    await expect(emulator.waitForDeliveries({ eventId: event.id }, { timeoutMs: 50 })).rejects.toThrow(
      /still waiting after 50 ms: 1 deliveries pending/,
    );
  });

  it.each([
    ['retryWindowMs', -1],
    ['initialBackoffMs', Number.NaN],
  ])('throws at construction for %s %p', async (name, value) => {
    await expect(createEmulator({ [name]: value })).rejects.toThrow(/createEmulator/);
  });
});
