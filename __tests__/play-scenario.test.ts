import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { createEventRouter, webhookReceiver } from 'service-webhooks';
import { buildEvent, playScenario, type Scenario } from 'service-webhooks/testing';

const token = 'scenario-token';

/** A receiver whose access-pass handler is ordered; it keeps the state each event left. */
function orderedApp() {
  const states: string[] = [];
  const router = createEventRouter().on(
    'ag.access_pass.*',
    ({ data }) => {
      states.push(String(data.state));
    },
    { ordering: 'newest-wins' },
  );
  const app = express();
  app.use('/webhooks', webhookReceiver({ bearerTokens: [token], router, logger: false }));
  return { app, states };
}

const at = (minute: number) => `2026-11-25T10:${String(minute).padStart(2, '0')}:00.000Z`;
const pass = (type: 'issued' | 'activated' | 'suspended' | 'updated', minute: number, state: string) => ({
  event: buildEvent(`ag.access_pass.${type}`, { id: 'ap_trap', state }, { time: at(minute) }),
  layout: 'A' as const,
});

/** Issued, activated, a suspended delivered twice, then an updated older than the suspended. */
const trap: Scenario = {
  scenarioVersion: 1,
  description: 'an ordering trap',
  deliveries: [
    { ...pass('issued', 1, 'created'), expect: { status: 200, body: { status: 'processed' } } },
    { ...pass('activated', 2, 'active'), expect: { status: 200, body: { status: 'processed' } } },
    { ...pass('suspended', 4, 'suspended'), repeat: 1, expect: { status: 200 } },
    { ...pass('updated', 3, 'active'), expect: { status: 200, body: { status: 'stale' } } },
  ],
};

describe('playScenario', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'scenario-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('plays a file in order, repeats included; the older event after a newer one is stale', async () => {
    const { app, states } = orderedApp();
    const file = join(dir, 'trap.json');
    writeFileSync(file, JSON.stringify(trap));
    const played = await playScenario(app, file, { token, path: '/webhooks' });
    expect(played.map((p) => [p.index, p.repeat, p.status, p.bodyStatus, p.attempts])).toEqual([
      [0, 0, 200, 'processed', 1],
      [1, 0, 200, 'processed', 1],
      [2, 0, 200, 'processed', 1],
      [2, 1, 200, 'duplicate', 1],
      [3, 0, 200, 'stale', 1],
    ]);
    // The stale update never ran: the pass stays suspended.
    expect(states).toEqual(['created', 'active', 'suspended']);
  });

  it('reports the first mismatch with the delivery index, its repeat and the answer', async () => {
    const { app, states } = orderedApp();
    const wrong: Scenario = structuredClone(trap);
    (wrong.deliveries[2] as { expect?: object }).expect = { body: { status: 'processed' } };
    await expect(playScenario(app, wrong, { token, path: '/webhooks' })).rejects.toThrow(
      /^\[service-webhooks\] playScenario: delivery 2 \(repeat 1\), ag\.access_pass\.suspended \[[^\]]+\]: expected body\.status "processed", got 200 .*"status":"duplicate"/,
    );
    // It stopped there: the update of delivery 3 was never sent.
    expect(states).toEqual(['created', 'active', 'suspended']);
  });

  it('checks the status: a wrong token expected to pass fails at delivery 0, nothing acknowledged', async () => {
    const { app, states } = orderedApp();
    await expect(playScenario(app, trap, { token: 'wrong', path: '/webhooks' })).rejects.toThrow(
      /delivery 0, ag\.access_pass\.issued \[[^\]]+\]: expected status 200 and body\.status "processed", got 401 /,
    );
    expect(states).toEqual([]);
  });

  it("with timing 'original' waits each delayMs before its delivery", async () => {
    const { app } = orderedApp();
    const delayed: Scenario = {
      scenarioVersion: 1,
      deliveries: [{ ...pass('issued', 1, 'created'), delayMs: 50 }],
    };
    const waits: number[] = [];
    const real = global.setTimeout;
    const spy = jest.spyOn(global, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      if (ms === 50) waits.push(ms);
      return real(fn, ms);
    }) as typeof setTimeout);
    try {
      await playScenario(app, delayed, { token, path: '/webhooks', timing: 'fast' });
      expect(waits).toEqual([]);
      await playScenario(app, delayed, { token, path: '/webhooks', timing: 'original' });
      expect(waits).toEqual([50]);
    } finally {
      spy.mockRestore();
    }
  });

  describe('with retries', () => {
    /** A receiver whose handler fails its first `failures` calls, as a dependency briefly down. */
    function flakyApp(failures: number) {
      const runs: string[] = [];
      let calls = 0;
      const router = createEventRouter().on('ag.access_pass.issued', (event) => {
        if (++calls <= failures) throw new Error('briefly down');
        runs.push(event.id);
      });
      const app = express();
      app.use('/webhooks', webhookReceiver({ bearerTokens: [token], router, logger: false }));
      return { app, runs };
    }
    const once: Scenario = {
      scenarioVersion: 1,
      deliveries: [
        { ...pass('issued', 1, 'created'), expect: { status: 200, body: { status: 'processed' } } },
      ],
    };

    it('sends a failed delivery again, as the Service does, and checks the last answer', async () => {
      const { app, runs } = flakyApp(2);
      const played = await playScenario(app, once, { token, path: '/webhooks', retries: 2 });
      expect(played).toEqual([
        expect.objectContaining({ index: 0, attempts: 3, status: 200, bodyStatus: 'processed' }),
      ]);
      expect(runs).toEqual([once.deliveries[0]!.event.id]);
    });

    it('stops at its bound: the last failure is reported with how many attempts were made, nothing acknowledged', async () => {
      const { app, runs } = flakyApp(2);
      await expect(playScenario(app, once, { token, path: '/webhooks', retries: 1 })).rejects.toThrow(
        /delivery 0, ag\.access_pass\.issued \[[^\]]+\]: expected status 200 and body\.status "processed", got 500 .* \(after 2 attempts\)$/,
      );
      expect(runs).toEqual([]);
    });

    it('sends an answered 200 once, whatever its body', async () => {
      const { app } = orderedApp();
      const played = await playScenario(app, trap, { token, path: '/webhooks', retries: 3 });
      expect(played.map((p) => p.attempts)).toEqual([1, 1, 1, 1, 1]);
    });
  });

  it.each([
    ['a misspelt option', { timng: 'fast' }, /unknown option "timng"; did you mean "timing"\?/],
    ['an unknown timing', { timing: 'slow' }, /timing must be 'fast' or 'original' \(got "slow"\)/],
    ['negative retries', { retries: -1 }, /retries must be a whole number from 0 to 100 \(got -1\)/],
    ['fractional retries', { retries: 1.5 }, /retries must be a whole number from 0 to 100 \(got 1\.5\)/],
    ['retries past the bound', { retries: 101 }, /retries must be a whole number from 0 to 100 \(got 101\)/],
    ['retries as text', { retries: '2' }, /retries must be a whole number from 0 to 100 \(got "2"\)/],
  ])('refuses %s', async (_, options, message) => {
    await expect(playScenario(orderedApp().app, trap, options as object)).rejects.toThrow(message);
  });

  it('plays the example of docs/scenarios.md, an ordering trap, with every expectation met', async () => {
    const guide = readFileSync(join(__dirname, '..', 'docs', 'scenarios.md'), 'utf8');
    const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(guide)?.[1] ?? 'null') as Scenario;
    const { app, states } = orderedApp();
    const played = await playScenario(app, example, { token, path: '/webhooks' });
    expect(played.map((p) => p.bodyStatus)).toEqual(['processed', 'processed', 'duplicate', 'stale']);
    expect(states).toEqual(['created', 'suspended']);
  });

  it('names the file when it is not JSON', async () => {
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{ "scenarioVersion": 1,');
    await expect(playScenario(orderedApp().app, file)).rejects.toThrow(
      `[service-webhooks] playScenario: ${file}: is not JSON`,
    );
  });
});
