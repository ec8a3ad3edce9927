import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import * as library from '../lib';
import * as consoleClient from '../lib/console';
import { createEmulator, type Emulator } from '../lib/emulator';
import { freePort } from './support/server-binary';

const GUIDE = readFileSync(path.join(__dirname, '..', 'docs', 'zero-to-verified.md'), 'utf8');

/** The guide's "From zero to verified" block, compiled and loaded as a user's module would be. */
function readmeSteps(): {
  fromZeroToVerified(
    setup: Record<string, unknown>,
  ): Promise<{ webhookId: string; received: string[]; close(): void }>;
} {
  const code = /```ts\n([\s\S]*?)```/.exec(GUIDE)?.[1];
  if (code === undefined) throw new Error('no ts block under "From zero to verified"');
  const { outputText } = ts.transpileModule(code, {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
  });
  const module = { exports: {} as Record<string, unknown> };
  const modules: Record<string, unknown> = {
    'service-webhooks': library,
    'service-webhooks/console': consoleClient,
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const requireFor = (name: string) => modules[name] ?? require(name);
  new Function('require', 'module', 'exports', outputText)(requireFor, module, module.exports);
  return module.exports as never;
}

describe('docs/zero-to-verified.md: from zero to verified', () => {
  let emulator: Emulator;
  let dir: string;
  beforeAll(async () => {
    emulator = await createEmulator({ logger: false, initialBackoffMs: 50, retryWindowMs: 20_000 });
    dir = mkdtempSync(path.join(tmpdir(), 'zero-to-verified-'));
  });
  afterAll(async () => {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts without a token, registers, stores the key, verifies and receives an event', async () => {
    const port = await freePort();
    const { fromZeroToVerified } = readmeSteps();
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const steps = await fromZeroToVerified({
      baseUrl: emulator.url,
      accountId: emulator.account.accountId,
      secretKey: emulator.account.secretKey,
      tokenFile: path.join(dir, 'token'),
      publicUrl: `http://127.0.0.1:${port}/webhooks`,
      port,
    });
    try {
      expect(emulator.getWebhook(steps.webhookId)?.verified).toBe(true);
      const { event } = emulator.emit('ag.access_pass.issued', { full_name: 'Ada' });
      await emulator.waitForDeliveries({ eventId: event.id });
      expect(steps.received).toEqual([event.id]);
      const attempts = emulator.attempts.filter((a) => a.eventId === event.id);
      expect(attempts.at(-1)?.status).toBe(200);
    } finally {
      steps.close();
      warn.mockRestore();
    }
  }, 60_000);
});
