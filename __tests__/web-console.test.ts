import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import type { Page } from 'playwright-core';
import { createEventRouter, webhookReceiver } from 'service-webhooks';
import { createEmulator, type Emulator } from 'service-webhooks/emulator';
import { chromiumOrSkip } from './support/chromium';
import { listen } from './support/listen';

const browser = chromiumOrSkip();
const TOKEN = 'web_console_token_0123456789';
const describeBrowser = browser.available ? describe : describe.skip;

describeBrowser('the web console in a real Chromium', () => {
  let emulator: Emulator;
  let closeApp: () => Promise<void>;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let context: { newPage(): Promise<Page> };
  const handled: string[] = [];
  const shots = fs.mkdtempSync(path.join(os.tmpdir(), 'service-webhooks-web-console-'));
  let step = 0;
  const shoot = async (name: string) => {
    await page.screenshot({
      path: path.join(shots, `${String(++step).padStart(2, '0')}-${name}.png`),
      fullPage: true,
    });
  };

  beforeAll(async () => {
    if (process.env.SW_KEEP_SCREENSHOTS === '1') process.stdout.write(`web console screenshots: ${shots}\n`);
    const app = express();
    const router = createEventRouter().on(
      'ag.access_pass.issued',
      (event) => void handled.push(event.data.full_name ?? ''),
    );
    app.use('/webhooks', webhookReceiver({ bearerTokens: [TOKEN], router, logger: false }));
    const server = await listen(app);
    closeApp = server.close;
    emulator = await createEmulator({ logger: false });
    await emulator.registerWebhook({
      name: 'orders app',
      url: `${server.url}/webhooks`,
      subscribedEvents: ['ag.access_pass.issued', 'ag.hid_org.created'],
      privateKey: TOKEN,
    });
    const launched = await browser.launch();
    closeBrowser = launched.close;
    page = await launched.context.newPage();
    context = launched.context;
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await emulator?.close();
    await closeApp?.();
    // Kept for a look only when asked (SW_KEEP_SCREENSHOTS=1): a test leaves nothing behind.
    if (process.env.SW_KEEP_SCREENSHOTS !== '1') fs.rmSync(shots, { recursive: true, force: true });
  });

  it('shows the verified webhook, live', async () => {
    await page.goto(`${emulator.url}/`);
    await page.locator('#live.on').waitFor();
    const row = page.locator('[data-testid^="webhook-wh_"]');
    await expect(row.locator('td.yes').textContent()).resolves.toBe('yes');
    await expect(row.textContent()).resolves.toContain('200');
    await shoot('console');
  });

  it('triggers an event from the form and shows its delivery with status 200', async () => {
    await page.selectOption('[data-testid="trigger-type"]', 'ag.access_pass.issued');
    await page.selectOption('[data-testid="trigger-layout"]', 'A');
    await page.fill('[data-testid="trigger-data"]', '{"full_name": "Ada Lovelace"}');
    await shoot('form-filled');
    await page.click('[data-testid="trigger-submit"]');
    const event = page.locator('[data-testid="event"][data-type="ag.access_pass.issued"]');
    await event.locator('[data-testid="attempt-status"]', { hasText: '200' }).waitFor();
    await expect(event.locator('.badge.acknowledged').count()).resolves.toBe(1);
    expect(handled).toEqual(['Ada Lovelace']);
    await shoot('delivered');
  });

  it('opens the payload, pretty-printed, and the answer with the token masked', async () => {
    const event = page.locator('[data-testid="event"]').first();
    await event.locator('[data-testid^="payload-"] summary').click();
    const payload = await event.locator('[data-testid="payload"]').textContent();
    expect(payload).toContain('"full_name": "Ada Lovelace"');
    expect(JSON.parse(payload ?? '')).toMatchObject({ type: 'ag.access_pass.issued', specversion: '1.0' });
    await event.locator('[data-testid^="answer-"] summary').first().click();
    await expect(event.locator('[data-testid="answer-body"]').first().textContent()).resolves.toContain(
      '"status": "processed"',
    );
    const headers = await event.locator('[data-testid="request-headers"]').first().textContent();
    expect(headers).toContain('"Authorization": "Bearer ••••••••"');
    expect(await page.content()).not.toContain(TOKEN);
    await shoot('payload-and-answer');
  });

  it('resends the event and shows the duplicate', async () => {
    const event = page.locator('[data-testid="event"]').first();
    await event.locator('[data-testid="resend"]').click();
    await expect(
      page
        .locator('[data-testid="event"]')
        .first()
        .locator('[data-testid="attempt-status"]', { hasText: '200' })
        .nth(1)
        .waitFor(),
    ).resolves.toBeUndefined();
    const again = page.locator('[data-testid="event"]').first();
    await again.locator('[data-testid^="answer-"] summary').nth(1).click();
    await expect(again.locator('[data-testid="answer-body"]').nth(1).textContent()).resolves.toContain(
      '"status": "duplicate"',
    );
    // One badge for the webhook, counting both deliveries, not two identical badges.
    const badges = again.locator('[data-testid="delivery-badge"]');
    await expect(badges.count()).resolves.toBe(1);
    await expect(badges.first().textContent()).resolves.toMatch(/: acknowledged ×2$/);
    expect(handled).toEqual(['Ada Lovelace']);
    await shoot('duplicate');
  });

  it('shows an event no verified webhook receives', async () => {
    await page.selectOption('[data-testid="trigger-type"]', 'ag.account_balance.low');
    await page.click('[data-testid="trigger-submit"]');
    const event = page.locator('[data-testid="event"][data-type="ag.account_balance.low"]');
    await expect(event.locator('.badge').textContent()).resolves.toBe('no verified webhook receives it');
    await shoot('unreceived');
  });

  it('lines the attempt columns up from event to event, and keeps Resend on the event line', async () => {
    emulator.emit('ag.hid_org.created', {});
    const withAttempts = page.locator('[data-testid="event"]:has([data-testid="attempt-status"])');
    // Three attempts in all: the issued event's two deliveries and the new one's.
    await page.locator('[data-testid="event"] [data-testid="attempt-status"]').nth(2).waitFor();
    await shoot('columns');
    const status = async (i: number) =>
      (await withAttempts.nth(i).locator('[data-testid="attempt-status"]').first().boundingBox())?.x;
    expect(await withAttempts.count()).toBeGreaterThanOrEqual(2);
    expect(await status(0)).toBeDefined();
    expect(await status(0)).toBe(await status(1));
    const head = withAttempts.first().locator('.event-head');
    const [line, button] = [
      await head.locator('strong').first().boundingBox(),
      await head.locator('[data-testid="resend"]').boundingBox(),
    ];
    expect(
      Math.abs((button?.y ?? 0) + (button?.height ?? 0) / 2 - ((line?.y ?? 0) + (line?.height ?? 0) / 2)),
    ).toBeLessThan(8);
  });

  it('paints the webhooks, account and events that exist at first paint, before any script runs', async () => {
    const first = await context.newPage();
    try {
      // The console's script never loads: what shows is what the server rendered.
      await first.route('**/_console/console.js', (route) => route.abort());
      await first.goto(`${emulator.url}/`);
      await shoot('first-paint');
      const row = first.locator('[data-testid^="webhook-wh_"]');
      await expect(row.count()).resolves.toBe(1);
      await expect(row.locator('td.yes').textContent()).resolves.toBe('yes');
      await expect(first.locator('#account-id').textContent()).resolves.toBe(emulator.account.accountId);
      await expect(first.locator('#api-url').textContent()).resolves.toBe(emulator.url);
      await expect(first.locator('[data-testid="events"]').textContent()).resolves.toContain(
        'ag.access_pass.issued',
      );
      await expect(first.getByText('No webhook yet').count()).resolves.toBe(0);
      await expect(first.getByText('No event yet').count()).resolves.toBe(0);
    } finally {
      await first.close();
    }
    const icon = await fetch(`${emulator.url}/favicon.ico`);
    expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml; charset=utf-8']);
  });
});
