// The console in a real Chromium against a real inbox on Redis (BullMQ) and on PostgreSQL (pg-boss):
// the first paint has the numbers with the script blocked, a failing handler's dead letters appear
// live, replay (one, then a filter after its confirmation) and pause/resume from the page, no script
// of an event runs, and every page passes axe-core with no serious or critical violation.
// Screenshots are kept only when a test fails (their folder is printed); SW_DOCS_SCREENSHOT=<file>
// writes the overview's for the docs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Page } from 'playwright-core';
import { createEventRouter, type Inbox, type InboxWorker } from '../lib';
import { inboxConsole, type InboxConsoleHandler } from 'service-webhooks/inbox-console';
import { chromiumOrSkip } from './support/chromium';
import { issuedDelivery, makeDeadLetters } from './support/dead-letters';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually } from './support/inbox-engines';
import { listen } from './support/listen';

const browser = chromiumOrSkip();
const describeBrowser = browser.available ? describe : describe.skip;
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const HOSTILE = {
  full_name: '<script>window.__owned = 1</script>',
  employee_id: '"><img src=x onerror="window.__owned = 2">',
  title: 'evil\u202Egpj.exe',
};

interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: unknown[];
}

/** axe-core's serious and critical violations on the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(AXE);
  const violations = await page.evaluate(() =>
    (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe
      .run()
      .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }))),
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}, ${String(v.nodes)} nodes)`);
}

describeBrowser('the inbox console in Chromium', () => {
  describeEachEngine('on $name', (engine, server) => {
    // Its own describe, so its afterAll closes the worker and the inbox before the engine's server stops.
    describe('with a console and a browser', () => {
      let inbox: Inbox;
      let handler: InboxConsoleHandler;
      let worker: InboxWorker | undefined;
      let url: string;
      let closeApp: () => Promise<void>;
      let closeBrowser: () => Promise<void>;
      let page: Page;
      let newPage: () => Promise<Page>;
      /** Whether the handler fails: the worker's one handler, so tries of a replay succeed once false. */
      let failing = true;
      const shots = fs.mkdtempSync(path.join(os.tmpdir(), `sw-inbox-console-${engine.name}-`));
      let failed = false;

      beforeAll(async () => {
        inbox = server().inbox(`console-proof-${process.pid}`);
        handler = inboxConsole({
          inbox,
          authorize: () => 'ops@example.com',
          basePath: '/ops',
          logger: false,
        });
        const app = await listen((req: IncomingMessage, res: ServerResponse) => handler(req, res));
        url = `${app.url}/ops`;
        closeApp = app.close;
        const launched = await browser.launch();
        closeBrowser = launched.close;
        newPage = () => launched.context.newPage();
        page = await newPage();
      }, 60_000);

      afterAll(async () => {
        handler?.close();
        await worker?.close();
        await closeBrowser?.();
        await closeApp?.();
        await inbox?.close();
        if (failed) process.stderr.write(`inbox console screenshots of the failures: ${shots}\n`);
        else fs.rmSync(shots, { recursive: true, force: true });
      }, 60_000);

      /** Runs `body`; on a failure keeps a screenshot of the page, then fails as it did. */
      async function step(name: string, body: () => Promise<void>) {
        try {
          await body();
        } catch (error) {
          failed = true;
          await page
            .screenshot({ path: path.join(shots, `${name}.png`), fullPage: true })
            .catch(() => undefined);
          throw error;
        }
      }

      const field = (p: Page, name: string) => p.locator(`[data-testid="${name}"]`).first().textContent();
      async function shows(p: Page, name: string, value: string) {
        await eventually(`${name} shows ${value}`, async () => (await field(p, name)) === value, 20_000);
      }

      it('the first paint, with the script blocked, shows the numbers and the dead letters', () =>
        step('first-paint', async () => {
          await makeDeadLetters(inbox, [issuedDelivery('evt_first_1'), issuedDelivery('evt_first_2')], 2);
          const blocked = await newPage();
          await blocked.route('**/assets/console.js', (route) => route.abort());
          await blocked.goto(`${url}/`);
          expect(await field(blocked, 'dead')).toBe('2');
          expect(await field(blocked, 'waiting')).toBe('0');
          expect(await field(blocked, 'paused-state')).toBe('running');
          expect(await blocked.locator('[data-testid="dead-letter"]').count()).toBe(2);
          expect(await blocked.locator('#live').textContent()).toBe('live updates off');
          expect(await seriousViolations(blocked)).toEqual([]);
          await blocked.close();
        }));

      it("a failing handler's dead letters appear live, and an event's script never runs", () =>
        step('live', async () => {
          await page.goto(`${url}/`);
          await page.locator('#live.on').waitFor({ timeout: 10_000 });
          worker = await inbox.startWorker(
            createEventRouter().onAny(function crmSync() {
              if (failing) throw new Error('the CRM is down');
            }),
            { attempts: 1, concurrency: 4, logger: false, onJob: handler.onJob },
          );
          for (const d of [issuedDelivery('evt_live_1'), issuedDelivery('evt_live_2', HOSTILE)])
            await inbox.enqueue(d);
          await shows(page, 'dead', '4');
          await page
            .locator('[data-testid="dead-letter"][data-event-id="evt_live_2"]')
            .waitFor({ timeout: 10_000 });
          await page.locator('#tries-chart rect[fill="#b91c1c"]').first().waitFor({ timeout: 10_000 });
          expect(await page.locator('[data-testid="tries-unwired"]').count()).toBe(0);
          if (process.env.SW_DOCS_SCREENSHOT && engine.name === 'bullmq')
            await page.screenshot({ path: process.env.SW_DOCS_SCREENSHOT, fullPage: true });
          await page.goto(`${url}/dead-letters/evt_live_2?type=ag.access_pass.issued`);
          expect(await page.locator('[data-testid="envelope"]').textContent()).toContain(
            '"full_name": "<script>window.__owned = 1</script>"',
          );
          expect(await page.locator('[data-testid="envelope"]').textContent()).toContain(
            'evil\\u202egpj.exe',
          );
          expect(await page.locator('img').count()).toBe(0);
          expect(await page.evaluate(() => (globalThis as { __owned?: number }).__owned)).toBeUndefined();
          expect(await seriousViolations(page)).toEqual([]);
        }));

      it('replays one from its page, then a filter after confirming', () =>
        step('replay', async () => {
          failing = false;
          await page.goto(`${url}/dead-letters/evt_live_1?type=ag.access_pass.issued`);
          await page.locator('[data-testid="replay-one"]').click();
          await page.locator('[data-testid="notice"]').waitFor();
          expect(await field(page, 'notice')).toBe('Replayed 1 dead letter: back in the queue.');
          await shows(page, 'dead', '3');
          await page.locator('[data-testid="replay-type"]').fill('ag.access_pass.issued');
          await page.locator('[data-testid="replay-filter"]').click();
          await page.locator('[data-testid="confirm-text"]').waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          expect((await inbox.status()).dead).toBe(3);
          await page.locator('[data-testid="confirm-replay"]').click();
          await page.locator('[data-testid="notice"]').waitFor();
          expect(await field(page, 'notice')).toBe('Replayed 3 dead letters: back in the queue.');
          await shows(page, 'dead', '0');
          await eventually('the replayed events processed', async () => {
            const s = await inbox.status();
            return s.waiting + s.active + s.delayed + s.dead === 0;
          });
          await page.locator('#tries-chart rect[fill="#15803d"]').first().waitFor({ timeout: 10_000 });
        }));

      it('pauses and resumes the queue, the state shown on every page', () =>
        step('pause', async () => {
          await page.goto(`${url}/`);
          await page.locator('[data-testid="pause"]').click();
          await page.locator('[data-testid="resume"]').waitFor();
          expect(await field(page, 'paused-state')).toBe('paused: no worker starts a try');
          expect((await inbox.status()).paused).toBe(true);
          await page.goto(`${url}/dead-letters`);
          expect(await field(page, 'paused-state')).toBe('paused: no worker starts a try');
          expect(await seriousViolations(page)).toEqual([]);
          await page.locator('[data-testid="resume"]').click();
          await page.locator('[data-testid="pause"]').waitFor();
          expect((await inbox.status()).paused).toBe(false);
          expect(await field(page, 'paused-state')).toBe('running');
        }));
    });
  });
});
