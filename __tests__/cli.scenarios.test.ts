import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { createEventRouter, webhookReceiver } from 'service-webhooks';
import { buildEvent, parseScenario, playScenario, type Scenario } from 'service-webhooks/testing';
import { createDemoReceiver } from '../demo-app/demo-receiver';
import { builtPackage, type BuiltPackage } from './support/built-package';
import { cliRunners } from './support/cli-process';
import { listen } from './support/listen';
import { pollUntil } from './support/poll-until';

let built: BuiltPackage;
let env: NodeJS.ProcessEnv;
let dir: string;
const closers: (() => Promise<void>)[] = [];

const { run, start, running } = cliRunners(() => ({ bin: built.bin, env }));

/** A receiver whose access-pass handler is ordered (newest wins); it keeps what each event ran with. */
function orderedApp(token: string) {
  const seen: { type: string; name: unknown }[] = [];
  const router = createEventRouter().on(
    'ag.access_pass.*',
    (event) => {
      seen.push({ type: event.type, name: event.data.full_name });
    },
    { ordering: 'newest-wins' },
  );
  const app = express();
  app.use('/webhooks', webhookReceiver({ bearerTokens: [token], router, logger: false }));
  return { app, seen };
}

async function serve(token: string) {
  const { app, seen } = orderedApp(token);
  const server = await listen(app);
  closers.push(server.close);
  return { url: `${server.url}/webhooks`, seen };
}

/** A listen process forwarding to `url`, verified; extra arguments appended. */
async function listening(url: string, ...args: string[]) {
  const listener = start('listen', '--forward-to', url, '--port', '0', ...args);
  await listener.waitFor(/^Webhook wh_\w+ verified: /);
  return listener;
}

beforeAll(async () => {
  built = await builtPackage();
}, 180_000);

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sw-scenario-'));
  env = { ...built.env, SERVICE_WEBHOOKS_CONFIG_DIR: dir, NO_COLOR: '' };
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((cli) => cli.interrupt()));
  await Promise.all(closers.splice(0).map((close) => close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

// What the test sends that is personal: none of it may be in the recorded file.
const PERSONAL = {
  'data.full_name': 'Ada Lovelace',
  'data.employee_id': 'EMP-90817',
  'data.title': 'Countess of Computing',
  'data.tag_id': '04c3a2b1e0f9d8',
  'data.details.card_number': '7788123',
  'data.details.file_data': 'deadbeef0042',
  'data.metadata.contact': 'ada.lovelace@example.org',
  'data.metadata.mobile': '+44 20 7946 0958',
  'data.metadata.badge': 'BADGE-4242',
};

describe('service-webhooks listen --record, trigger --scenario', () => {
  it('records from the emulator, redacted and commit-safe, and plays it back with every expectation met', async () => {
    const token = (await run('listen', '--print-token')).stdout[0] as string;
    const recorded = await serve(token);
    const file = path.join(dir, 'today.json');
    const listener = await listening(recorded.url, '--record', file, '--redact', 'badge');
    expect(listener.lines).toContain(`Recording to ${file} (personal fields redacted)`);

    // Each value as a JSON string: --set would read the card number as a number.
    const sets = Object.entries(PERSONAL).flatMap(([field, value]) => [
      '--set',
      `${field}=${JSON.stringify(value)}`,
    ]);
    const issued = await run('trigger', 'ag.access_pass.issued', ...sets, '--duplicate', '1');
    expect({ code: issued.code, lines: issued.lines }).toMatchObject({ code: 0 });
    expect((await run('trigger', 'ag.access_pass.suspended', '--layout', 'B')).code).toBe(0);
    const read = () => JSON.parse(fs.readFileSync(file, 'utf8')) as Scenario;
    await pollUntil('three deliveries recorded', () => read().deliveries.length === 3, {
      timeoutMs: 20_000,
      everyMs: 50,
      describe: () => JSON.stringify(read().deliveries.length),
    });
    expect(await listener.interrupt()).toBe(0);

    const text = fs.readFileSync(file, 'utf8');
    for (const value of Object.values(PERSONAL)) expect(text).not.toContain(value);
    for (const never of [token, 'Bearer', 'authorization', 'user-agent', 'x-service-webhook'])
      expect(text.toLowerCase()).not.toContain(never.toLowerCase());
    const scenario = parseScenario(JSON.parse(text), 'test');
    expect(scenario.deliveries.map((d) => [d.event.type, d.layout, d.expect])).toEqual([
      ['ag.access_pass.issued', 'A', { status: 200, body: { status: 'processed' } }],
      ['ag.access_pass.issued', 'A', { status: 200, body: { status: 'duplicate' } }],
      ['ag.access_pass.suspended', 'B', { status: 200, body: { status: 'processed' } }],
    ]);
    expect(recorded.seen.map((s) => s.name)).toEqual(['Ada Lovelace', null]);

    // Played back by the test kit against the demo's receiver: processed, duplicate, processed again.
    const demo = createDemoReceiver(false);
    demo.useToken(token);
    const played = await playScenario(demo.app, file, { token, path: '/webhooks' });
    expect(played.map((p) => p.bodyStatus)).toEqual(['processed', 'duplicate', 'processed']);
    expect([...demo.handled.values()]).toEqual([1, 1]);
    await demo.drain();
    // Same shape: the fake name is a first and last name as long as the real one.
    const fresh = orderedApp(token);
    await playScenario(fresh.app, file, { token, path: '/webhooks' });
    expect(fresh.seen[0]?.name).toMatch(/^[A-Z][a-z]{2} [A-Z][a-z]{7}$/);

    // And through the emulator, to another fresh receiver, by the CLI.
    const second = await serve(token);
    await listening(second.url);
    const replay = await run('trigger', '--scenario', file);
    expect(replay.stderr).toEqual([]);
    expect(replay.code).toBe(0);
    expect(replay.stdout.at(-1)).toBe('Played 3 deliveries; every expectation met.');
    expect(replay.stdout[1]).toMatch(/^delivery 1, ag\.access_pass\.issued \[[\w-]+\] → 200 duplicate$/);
    expect(second.seen).toHaveLength(2);
  }, 90_000);

  const at = (minute: number) => `2026-11-25T10:0${minute}:00.000Z`;
  const step = (type: 'issued' | 'suspended' | 'updated', minute: number, status?: string) => ({
    event: buildEvent(`ag.access_pass.${type}`, { id: 'ap_cli_trap' }, { time: at(minute) }),
    layout: 'A' as const,
    ...(status === undefined ? {} : { expect: { status: 200, body: { status } } }),
  });
  const trap = (last: string): Scenario => ({
    scenarioVersion: 1,
    deliveries: [step('issued', 1, 'processed'), step('suspended', 3, 'processed'), step('updated', 2, last)],
  });

  it('an older event after a newer one is stale through the emulator; a wrong expectation exits 1 naming the delivery', async () => {
    const token = (await run('listen', '--print-token')).stdout[0] as string;
    const app = await serve(token);
    await listening(app.url);
    const file = path.join(dir, 'trap.json');
    fs.writeFileSync(file, JSON.stringify(trap('stale')));
    const ok = await run('trigger', '--scenario', file);
    expect(ok.code).toBe(0);
    expect(ok.stdout[2]).toMatch(/^delivery 2, ag\.access_pass\.updated \[[\w-]+\] → 200 stale$/);
    expect(app.seen.map((s) => s.type)).toEqual(['ag.access_pass.issued', 'ag.access_pass.suspended']);

    const wrong = path.join(dir, 'wrong.json');
    const expectsProcessed = trap('processed');
    // Other events of another pass, so the first two are not stale against the run above.
    for (const d of expectsProcessed.deliveries) {
      d.event.id = `${d.event.id}-2`;
      d.event.data.id = 'ap_cli_trap_2';
    }
    fs.writeFileSync(wrong, JSON.stringify(expectsProcessed));
    const failed = await run('trigger', '--scenario', wrong);
    expect(failed.code).toBe(1);
    expect(failed.stderr.join('\n')).toMatch(
      /^error: delivery 2, ag\.access_pass\.updated \[[\w-]+-2\]: expected body\.status "processed", got 200 .*"status":"stale"/,
    );
  }, 60_000);

  it.each([
    [
      'an unknown type',
      (s: Scenario) => ((s.deliveries[1]!.event.type = 'ag.access_pass.suspnded'), s),
      /deliveries\[1\]\.event\.type: unknown event type "ag\.access_pass\.suspnded"; did you mean "ag\.access_pass\.suspended"\?/,
    ],
    [
      'a misspelt field',
      (s: Scenario) => ((s.deliveries[0]!.event.data.ful_name = 'x'), s),
      /deliveries\[0\]\.event\.data: .*"ful_name".*did you mean "full_name"/,
    ],
    [
      'an unknown key',
      (s: Scenario) => ({ ...s, delivries: [] }),
      /\(the top level\): unknown key "delivries"; did you mean "deliveries"\?/,
    ],
  ])('a scenario file with %s exits 2 naming the path inside it', async (_, breakIt, message) => {
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, JSON.stringify(breakIt(trap('stale'))));
    const result = await run('trigger', '--scenario', file, '--emulator', 'http://127.0.0.1:1');
    expect(result.code).toBe(2);
    expect(result.stderr.join('\n')).toMatch(
      new RegExp(`^error: --scenario: ${file.replace(/[.]/g, '\\.')}: `),
    );
    expect(result.stderr.join('\n')).toMatch(message);
  });
});
