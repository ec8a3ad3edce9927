import {
  answerJson,
  consoleClientFor,
  consoleServer,
  fullPage,
  newWebhookPage,
} from './support/console-server';

describe('walking the webhook list ends on a misbehaving server', () => {
  it('stops on a page seen before (a server that ignores page)', async () => {
    const page = fullPage();
    const same = await consoleServer((_req, res) => answerJson(res, 200, page));
    try {
      const ids: string[] = [];
      for await (const webhook of consoleClientFor(same.url).iterateWebhooks()) ids.push(webhook.id);
      expect(ids).toHaveLength(100);
      expect(same.seen).toHaveLength(2);
      await expect(
        consoleClientFor(same.url).waitUntilVerified('wh_other', { timeoutMs: 2000 }),
      ).rejects.toThrow('is not on this account');
    } finally {
      await same.close();
    }
  });

  it('gives up past 1000 pages', async () => {
    const endless = await consoleServer((_req, res) => answerJson(res, 200, newWebhookPage()));
    try {
      let count = 0;
      const walk = async () => {
        for await (const _ of consoleClientFor(endless.url).iterateWebhooks({ perPage: 1 })) count++;
      };
      await expect(walk()).rejects.toThrow(/went on past 1000 pages/);
      expect(count).toBe(1000);
      expect(endless.seen).toHaveLength(1000);
    } finally {
      await endless.close();
    }
  }, 30_000);
});
