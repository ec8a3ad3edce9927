import { signPayload } from '../lib/console';
import { createEmulator, type Emulator } from '../lib/emulator';

describe('the emulator console API: an unknown account and a bad signature look alike', () => {
  let emulator: Emulator;
  afterEach(() => emulator?.close());

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
});
