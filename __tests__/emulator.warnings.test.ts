import express from 'express';
import { createEventRouter, webhookReceiver } from '../lib';
import { createEmulator, type Emulator } from '../lib/emulator';
import { captureLogger } from './support/capture-logger';
import { listen } from './support/listen';

/** A customer app whose receiver holds `token` from the start, as a local setup configures it. */
async function appWithToken(token: string) {
  const handled: string[] = [];
  const app = express();
  const router = createEventRouter().onAny((event) => void handled.push(event.id));
  app.use('/webhooks', webhookReceiver({ bearerTokens: [token], router, logger: false }));
  const server = await listen(app);
  return { url: `${server.url}/webhooks`, handled, close: server.close };
}

describe('the emulator on the way from zero to verified (issue 11)', () => {
  let emulator: Emulator;
  const logger = captureLogger();
  const closers: (() => Promise<void>)[] = [];
  beforeEach(async () => {
    logger.records.length = 0;
    emulator = await createEmulator({ logger, initialBackoffMs: 20, retryWindowMs: 500 });
  });
  afterEach(async () => {
    await emulator.close();
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  it('registerWebhook({ privateKey }) delivers with the token chosen up front', async () => {
    const token = 'local_dev_token_0123456789';
    const app = await appWithToken(token);
    closers.push(app.close);
    const webhook = await emulator.registerWebhook({
      name: 'local',
      url: app.url,
      subscribedEvents: ['ag.hid_org.created'],
      privateKey: token,
    });
    expect(webhook).toMatchObject({ verified: true, privateKey: token });
    const { event } = emulator.emit('ag.hid_org.created');
    await emulator.waitForDeliveries({ eventId: event.id });
    expect(app.handled).toEqual([event.id]);
    expect(logger.messages('warn')).toEqual([]);
  });

  it.each(['short', 'has spaces in it, sixteen+', 'x'.repeat(513), 'nul\u0000character_0123456'])(
    'refuses privateKey %j',
    async (privateKey) => {
      await expect(
        emulator.registerWebhook({
          name: 'x',
          url: 'http://127.0.0.1:9/',
          subscribedEvents: ['ag.hid_org.created'],
          privateKey,
        }),
      ).rejects.toThrow(/privateKey must be 16 to 512 token characters/);
      expect(emulator.listWebhooks()).toEqual([]);
    },
  );

  it('warns when an event reaches no verified webhook, naming each unverified one and its last handshake', async () => {
    const app = await appWithToken('the_token_the_app_was_given');
    closers.push(app.close);
    const webhook = await emulator.registerWebhook({
      name: 'placeholder',
      url: app.url,
      subscribedEvents: ['ag.hid_org.created'],
    });
    expect(webhook.verified).toBe(false);
    expect(webhook.lastHandshake).toMatchObject({ verified: false, status: 401 });

    const { event, deliveries } = emulator.emit('ag.hid_org.created');
    expect(deliveries).toEqual([]);
    const [warning, ...more] = logger.records.filter((r) => r.level === 'warn');
    expect(more).toEqual([]);
    expect(warning?.message).toContain(`event ag.hid_org.created ${event.id} was delivered nowhere`);
    expect(warning?.message).toContain(`${webhook.id} at ${app.url} (last handshake answered 401`);
    expect(warning?.message).toContain("Start the app with the webhook's token");
    expect(warning?.message).not.toContain(webhook.privateKey);
    expect(warning?.meta).toMatchObject({
      eventId: event.id,
      unverified: [{ id: webhook.id, lastHandshake: { status: 401 } }],
    });
  });

  it('says why when the handshake got no answer at all', async () => {
    const app = await appWithToken('t'.repeat(16));
    await app.close();
    const webhook = await emulator.registerWebhook({
      name: 'down',
      url: app.url,
      subscribedEvents: ['ag.hid_org.created'],
    });
    emulator.emit('ag.hid_org.created');
    expect(logger.messages('warn')[0]).toContain(
      `${webhook.id} at ${app.url} (last handshake no answer: ECONNREFUSED)`,
    );
  });

  it('warns when no webhook subscribes to the type at all', () => {
    const { event } = emulator.emit('ag.account_balance.low');
    expect(logger.messages('warn')).toEqual([
      `[service-webhooks] emulator: event ag.account_balance.low ${event.id} was delivered nowhere: no webhook subscribes to ag.account_balance.low`,
    ]);
  });
});
