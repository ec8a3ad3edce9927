import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createDemoReceiver } from '../demo-app/demo-receiver';
import { DEMO_SCENARIO, formatTable, runDemo } from '../demo-app/run-demo';
import { buildEvent, playScenario, sendEvent, type Scenario } from '../lib/testing';
import { DEMO_TOKEN, playDemoScenario } from './support/demo-scenario';
import { gate } from './support/gate';

const ROOT = path.join(__dirname, '..');

/** Reads server-sent events from `url` until `stop` says enough. */
function readEvents(
  url: string,
  stop: (events: { name: string; data: unknown }[]) => boolean,
  heard: (events: { name: string; data: unknown }[]) => void = () => undefined,
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
          heard(events);
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

  it('runDemo reports every type in both layouts, and the emulator web console is its dashboard', async () => {
    const handled: string[] = [];
    const run = await runDemo({
      logger: { info: (_meta: unknown, line: string) => void handled.push(line) },
    });
    try {
      // Each line says only what its event carries: no field its layout lacks shown as null or unknown.
      expect(handled.length).toBeGreaterThanOrEqual(54);
      expect(handled.filter((line) => /\bnull\b|\bunknown\b|\bundefined\b| —/.test(line))).toEqual([]);
      expect(run.problems).toEqual([]);
      expect(run.ok).toBe(true);
      expect(new Set(run.rows.map((r) => `${r.type}/${r.layout}`)).size).toBe(54);
      expect(formatTable(run.rows).split('\n')).toHaveLength(57);
      const page = await fetch(run.consoleUrl);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain('/_console/console.js');
      const state = (await (await fetch(`${run.consoleUrl}_emulator/state`)).json()) as {
        webhooks: { verified: boolean }[];
        events: { event: { id: string }; deliveries: unknown[]; attempts: { status: number | null }[] }[];
      };
      expect(state.webhooks.map((w) => w.verified)).toEqual([true]);
      // The scenario's events; the emulator may add its own (ag.webhook.cert_expiring about its client
      // certificate, to a webhook subscribed to every type).
      const played = new Set(run.rows.map((r) => r.eventId));
      const scenario = state.events.filter((e) => played.has(e.event.id));
      expect(scenario).toHaveLength(54);
      expect(scenario.flatMap((e) => e.deliveries)).toHaveLength(55);
      expect(
        scenario
          .flatMap((e) => e.attempts)
          .map((a) => a.status)
          .sort(),
      ).toEqual([...Array<number>(55).fill(200), 500]);
    } finally {
      await run.close();
    }
  }, 60_000);

  it('the web console follows the demo live over server-sent events', async () => {
    const run = await runDemo();
    try {
      const hello = gate('the web console stream said hello');
      const stream = readEvents(
        `${run.consoleUrl}_emulator/stream`,
        (events) => events.some((e) => e.name === 'attempt'),
        () => hello.open(),
      );
      await hello.opened;
      const res = await fetch(`${run.consoleUrl}_emulator/events`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'ag.hid_org.created', layout: 'B' }),
      });
      const { event } = (await res.json()) as { event: { id: string } };
      const events = await stream;
      expect(events[0]?.name).toBe('hello');
      expect(events).toContainEqual(expect.objectContaining({ name: 'event' }));
      expect(events.at(-1)).toMatchObject({
        name: 'attempt',
        data: {
          attempt: { eventId: event.id, type: 'ag.hid_org.created', status: 200, outcome: 'acknowledged' },
        },
      });
    } finally {
      await run.close();
    }
  }, 60_000);

  it('its scenario file plays against the demo receiver with every expectation met, each event handled once', async () => {
    const demo = createDemoReceiver();
    demo.useToken(DEMO_TOKEN);
    await playDemoScenario(demo.app, '/webhooks', demo.handled, () => demo.drain());
  });

  it('played without retries, its flaky event stops the scenario with the 500, unacknowledged and not handled', async () => {
    const demo = createDemoReceiver();
    demo.useToken(DEMO_TOKEN);
    await expect(
      playScenario(demo.app, DEMO_SCENARIO, { token: DEMO_TOKEN, path: '/webhooks' }),
    ).rejects.toThrow(
      /playScenario: delivery 32, ag\.card_template\.published \[[^\]]+\]: expected status 200 and body\.status "processed", got 500 /,
    );
    const scenario = JSON.parse(readFileSync(DEMO_SCENARIO, 'utf8')) as Scenario;
    expect(demo.handled.has(scenario.deliveries[32]!.event.id)).toBe(false);
    expect(demo.handled.size).toBe(32);
  });

  it('runDemo reports an expectation of the file the receiver did not meet, naming the delivery', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'demo-scenario-'));
    const scenario = JSON.parse(readFileSync(DEMO_SCENARIO, 'utf8')) as Scenario;
    const file = path.join(dir, 'wrong.json');
    // Only the flaky event, then its duplicate wrongly expected processed.
    const flaky = scenario.deliveries[32]!;
    writeFileSync(
      file,
      JSON.stringify({
        ...scenario,
        deliveries: [flaky, { ...flaky, expect: { status: 200, body: { status: 'processed' } } }],
      }),
    );
    const run = await runDemo({ scenario: file });
    try {
      expect(run.ok).toBe(false);
      expect(run.problems).toEqual([
        'delivery 1, ag.card_template.published (A): answered "duplicate", not "processed"',
      ]);
      expect(run.rows.map((r) => [r.attempts, r.receiver, r.note])).toEqual([
        [2, 'processed', 'handler fails once, retried'],
        [1, 'duplicate', 'the same event delivered again'],
      ]);
    } finally {
      await run.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('answers 503 to deliveries before it knows its token, so nothing is acknowledged unprocessed', async () => {
    const demo = createDemoReceiver();
    await sendEvent(demo.app, buildEvent('ag.hid_org.created'), { token: 'x', path: '/webhooks' }).expect(
      503,
    );
    expect(demo.handled.size).toBe(0);
  });
});
