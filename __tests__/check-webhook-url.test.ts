import { createEmulator, type Emulator } from '../lib/emulator';

describe('the emulator takes only http:// and https:// webhook URLs', () => {
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
});
