import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { createDemoReceiver } from '../demo-app/demo-receiver';
import { formatTable, runDemo } from '../demo-app/run-demo';
import { buildEvent, sendEvent, sendHandshake } from '../lib/testing';
import { listen } from './support/listen';

const ROOT = path.join(__dirname, '..');

/** Reads server-sent events from `url` until `stop` says enough. */
function readEvents(
  url: string,
  stop: (events: { name: string; data: unknown }[]) => boolean,
): Promise<{ name: string; data: unknown }[]> {
  return new Promise((resolve, reject) => {
    const events: { name: string; data: unknown }[] = [];
    const req = http.get(url, (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const name = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
          const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as unknown;
          events.push({ name, data });
          if (stop(events)) {
            req.destroy();
            resolve(events);
          }
        }
      });
    });
    req.on('error', (error) => (events.length ? undefined : reject(error)));
  });
}

describe('the demo app', () => {
  it('npm run demo -- --once plays the scenario and exits 0', async () => {
    const { stdout } = await promisify(execFile)('npm', ['run', 'demo', '--', '--once'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(stdout).toMatch(/verified: true/);
    expect(stdout).toMatch(
      /ag\.card_template\.published\s+A\s+2\s+acknowledged\s+processed\s+handler fails once, retried/,
    );
    expect(stdout).toMatch(
      /ag\.access_pass\.issued\s+A\s+1\s+acknowledged\s+duplicate\s+the same event delivered again/,
    );
    expect(stdout).toContain(
      '55 deliveries of 54 events; 55 acknowledged; every event handled exactly once: yes',
    );
  }, 120_000);

  it('runDemo reports every type in both layouts, and the dashboard serves its state', async () => {
    const run = await runDemo();
    try {
      expect(run.problems).toEqual([]);
      expect(run.ok).toBe(true);
      expect(new Set(run.rows.map((r) => `${r.type}/${r.layout}`)).size).toBe(54);
      const state = (await (await fetch(`${run.dashboardUrl}state`)).json()) as {
        webhook: { verified: boolean };
        deliveries: unknown[];
      };
      expect(state.webhook.verified).toBe(true);
      expect(state.deliveries).toHaveLength(56);
      expect(formatTable(run.rows).split('\n')).toHaveLength(57);
    } finally {
      await run.close();
    }
  }, 60_000);

  it('the dashboard page follows the receiver live over server-sent events', async () => {
    const demo = createDemoReceiver();
    const server = await listen(demo.app);
    try {
      const page = await fetch(`${server.url}/`);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain("new EventSource('events')");

      demo.setWebhook({ id: 'wh_1', verified: false });
      const stream = readEvents(`${server.url}/events`, (events) =>
        events.some((e) => e.name === 'delivery'),
      );
      await sendHandshake(demo.app, { path: '/webhooks', challenge: 'chl_dash' }).expect(200, {
        challenge: 'chl_dash',
      });
      demo.useToken('tok_dash');
      demo.setWebhook({ id: 'wh_1', verified: true });
      const event = buildEvent('ag.hid_org.created', {}, { layout: 'B' });
      await sendEvent(demo.app, event, { token: 'tok_dash', path: '/webhooks' }).expect(200);
      const events = await stream;
      expect(events[0]).toEqual({ name: 'webhook', data: { id: 'wh_1', verified: false } });
      expect(events).toContainEqual({ name: 'webhook', data: { id: 'wh_1', verified: true } });
      expect(events.at(-1)).toMatchObject({
        name: 'delivery',
        data: {
          type: 'ag.hid_org.created',
          layout: 'B',
          eventId: event.id,
          attempt: 1,
          status: 200,
          outcome: 'processed',
        },
      });
    } finally {
      await server.close();
    }
  });

  it('answers 503 to deliveries before it knows its token, so nothing is acknowledged unprocessed', async () => {
    const demo = createDemoReceiver();
    await sendEvent(demo.app, buildEvent('ag.hid_org.created'), { token: 'x', path: '/webhooks' }).expect(
      503,
    );
    expect(demo.handled.size).toBe(0);
  });
});
