import { answerJson, consoleClientFor, consoleServer, fullPage } from './support/console-server';

describe('waitUntilVerified keeps its deadline inside pagination', () => {
  it('rejects at its deadline against a server that always answers a new full page', async () => {
    // Each page answers after 2 ms, so the 1000-page cap lies past 2 s whatever the machine's speed:
    // only the 500 ms deadline can end the wait.
    const endless = await consoleServer(
      (_req, res) => void setTimeout(() => answerJson(res, 200, fullPage()), 2),
    );
    try {
      const started = Date.now();
      await expect(
        consoleClientFor(endless.url).waitUntilVerified('wh_never', { timeoutMs: 500 }),
      ).rejects.toThrow('webhook wh_never not verified after 500 ms');
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      await endless.close();
    }
  });

  it('cuts a list request short at the deadline, not at the client timeout', async () => {
    const silent = await consoleServer(() => undefined);
    try {
      const started = Date.now();
      await expect(
        consoleClientFor(silent.url, 10_000).waitUntilVerified('wh_1', { timeoutMs: 300 }),
      ).rejects.toThrow('not verified after 300 ms');
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      await silent.close();
    }
  });
});
