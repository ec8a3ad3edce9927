import express from 'express';
import { signPayload } from '../lib/console';
import { createEmulator, type Emulator } from '../lib/emulator';
import { listen } from './support/listen';

/** An endpoint that verifies, then holds each delivery `holdMs` while counting how many are in flight. */
async function countingEndpoint(holdMs: number) {
  const stats = { inFlight: 0, most: 0, received: 0 };
  const app = express();
  app.use(express.json({ type: () => true }));
  app.post('/hook', (req, res) => {
    const body = req.body as { challenge?: string };
    if (body.challenge) return void res.json({ challenge: body.challenge });
    stats.received++;
    stats.most = Math.max(stats.most, ++stats.inFlight);
    setTimeout(() => {
      stats.inFlight--;
      res.sendStatus(200);
    }, holdMs);
  });
  const server = await listen(app);
  return { stats, url: `${server.url}/hook`, close: server.close };
}

describe('emulator hardening (issue 10, item 17)', () => {
  let emulator: Emulator;
  afterEach(() => emulator?.close());

  it.each([
    'file:///etc/passwd',
    'gopher://127.0.0.1:70/_x',
    'data:,hello',
    'ftp://127.0.0.1/x',
    'javascript:alert(1)',
    '/relative/hook',
  ])('registerWebhook refuses %s before sending anything', async (url) => {
    emulator = await createEmulator();
    await expect(
      emulator.registerWebhook({ name: 'x', url, subscribedEvents: ['ag.hid_org.created'] }),
    ).rejects.toThrow(/url must be an absolute http:\/\/ or https:\/\/ URL/);
    expect(emulator.listWebhooks()).toEqual([]);
  });

  it('updateWebhook refuses a file: URL and leaves the webhook as it was', async () => {
    emulator = await createEmulator();
    const webhook = await emulator.registerWebhook({
      name: 'x',
      url: 'http://127.0.0.1:9/hook',
      subscribedEvents: ['ag.hid_org.created'],
    });
    await expect(
      emulator.updateWebhook(webhook.id, { name: 'y', url: 'file:///etc/passwd' }),
    ).rejects.toThrow(/http:\/\/ or https:\/\//);
    expect(emulator.getWebhook(webhook.id)).toMatchObject({ name: 'x', url: 'http://127.0.0.1:9/hook' });
  });

  it('answers an unknown account and a wrong signature with the same 401', async () => {
    emulator = await createEmulator();
    const ask = (accountId: string, secret: string) =>
      fetch(`${emulator.url}/v1/console/webhooks?sig_payload=%7B%7D`, {
        headers: { 'X-ACCT-ID': accountId, 'X-PAYLOAD-SIG': signPayload('{}', secret) },
      }).then(async (res) => [res.status, res.headers.get('content-type'), await res.text()]);
    const unknownAccount = await ask('acct_nobody', emulator.account.secretKey);
    const wrongSignature = await ask(emulator.account.accountId, 'not-the-secret');
    expect(unknownAccount[0]).toBe(401);
    expect(unknownAccount).toEqual(wrongSignature);
    expect(unknownAccount[2]).not.toMatch(/unknown/i);
  });

  it.each([
    [3, 3],
    [undefined, 8],
  ])('keeps at most maxConcurrentDeliveries=%p (so %p) attempts in flight', async (max, bound) => {
    emulator = await createEmulator(max === undefined ? {} : { maxConcurrentDeliveries: max });
    const endpoint = await countingEndpoint(40);
    try {
      await emulator.registerWebhook({
        name: 'c',
        url: endpoint.url,
        subscribedEvents: ['ag.hid_org.created'],
      });
      for (let i = 0; i < 30; i++) emulator.emit('ag.hid_org.created');
      await emulator.waitForIdle({ timeoutMs: 10_000 });
      expect(endpoint.stats.received).toBe(30);
      expect(emulator.deliveries.every((d) => d.state === 'acknowledged')).toBe(true);
      expect(endpoint.stats.most).toBe(bound);
    } finally {
      await endpoint.close();
    }
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses maxConcurrentDeliveries %p at construction', async (value) => {
    await expect(createEmulator({ maxConcurrentDeliveries: value })).rejects.toThrow(
      /maxConcurrentDeliveries must be a whole number of at least 1/,
    );
  });
});
