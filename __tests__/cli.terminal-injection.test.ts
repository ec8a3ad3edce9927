import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { builtPackage, type BuiltPackage } from './support/built-package';
import { runCli, type CliRun } from './support/cli-process';
import { listen } from './support/listen';
import { buildEvent } from 'service-webhooks/testing';
import { ESCAPED, HOSTILE, RAW_CONTROL, expectEscaped } from './support/terminal-injection';

/*
 * Every string the Service, the emulator or a receiver controls reaches the terminal escaped, as the
 * receiver's own log escapes it (issue 28 item 8). A stand-in plays the emulator's control API and the
 * console API, answering with a hostile value in every field a command prints; the real bin runs
 * against it, its bytes read raw.
 */

let built: BuiltPackage;
let env: NodeJS.ProcessEnv;
let config: string;
const running: CliRun[] = [];
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  built = await builtPackage();
}, 180_000);

beforeEach(() => {
  config = fs.mkdtempSync(path.join(os.tmpdir(), 'sw-cli-escape-'));
  // Every command is given --emulator, which wins over any SERVICE_* variable; listen keeps its state here.
  env = { ...built.env, SERVICE_WEBHOOKS_CONFIG_DIR: config };
});

afterEach(async () => {
  for (const cli of running.splice(0)) await cli.interrupt();
  for (const close of closers.splice(0)) await close();
  fs.rmSync(config, { recursive: true, force: true });
});

function json(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

const attempt = {
  eventId: HOSTILE,
  type: HOSTILE,
  webhookId: 'wh_listen',
  url: HOSTILE,
  attempt: 1,
  status: 400,
  error: null,
  at: '2026-11-25T12:00:00.000Z',
  durationMs: 3,
  outcome: 'retrying',
  requestHeaders: {},
  responseHeaders: {},
  responseBody: JSON.stringify({ status: 400, detail: HOSTILE }),
};

/** The emulator's control API and the console API, every printed field hostile. */
async function hostileService() {
  const streams: http.ServerResponse[] = [];
  const send = (change: unknown) => {
    for (const s of streams) s.write(`event: change\ndata: ${JSON.stringify(change)}\n\n`);
  };
  const webhook = (verified: boolean) => ({
    id: 'wh_listen',
    name: HOSTILE,
    url: HOSTILE,
    verified,
    subscribedEvents: ['ag.access_pass.issued'],
    lastHandshake: { status: 401, reason: HOSTILE, at: '2026-11-25T12:00:00.000Z' },
  });
  const server = await listen((req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume();
    const route = `${req.method} ${(req.url ?? '').split('?')[0]}`;
    if (route === 'GET /_emulator/account') return json(res, 200, { accountId: 'acct_1', secretKey: 'sk_1' });
    if (route === 'GET /_emulator/state')
      return json(res, 200, {
        url: '',
        accountId: 'acct_1',
        webhooks: [],
        events: [
          {
            event: { id: HOSTILE, type: HOSTILE, time: `2026-11-25T${HOSTILE}` },
            deliveries: [],
            attempts: [{ ...attempt, status: null, error: HOSTILE }],
            webhooks: [{ webhookId: HOSTILE, deliveries: 1, states: { [HOSTILE]: 1 }, attempts: 1 }],
          },
        ],
      });
    if (route === 'POST /_emulator/events')
      return json(res, 201, { event: { id: HOSTILE, type: 'ag.access_pass.issued' }, webhookIds: ['wh'] });
    if (route.startsWith('POST /_emulator/events/'))
      return json(res, 201, { event: { id: HOSTILE, type: HOSTILE }, webhookIds: ['wh'] });
    if (route === 'GET /_emulator/stream') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('event: hello\ndata: {}\n\n');
      streams.push(res);
      return;
    }
    if (route === 'POST /_emulator/webhooks') return json(res, 201, webhook(false));
    if (route === 'POST /_emulator/webhooks/wh_listen/handshake') {
      json(res, 200, webhook(true));
      // After the answer: listen knows its webhook's id by then.
      setTimeout(() => {
        send({ kind: 'sending', webhookId: 'wh_listen', eventId: HOSTILE, type: HOSTILE });
        send({ kind: 'attempt', attempt });
      }, 50);
      return;
    }
    if (route === 'POST /_emulator/deliveries')
      return json(res, 201, { event: { id: 'evt_s', type: 'ag.access_pass.issued' }, webhookIds: ['wh'] });
    if (route === 'GET /_emulator/events/evt_s')
      return json(res, 200, {
        deliveries: [{ state: 'acknowledged' }],
        attempts: [
          { ...attempt, webhookId: 'wh', status: 200, responseBody: JSON.stringify({ status: HOSTILE }) },
        ],
      });
    if (route.startsWith('DELETE /_emulator/webhooks/')) return json(res, 200, {});
    if (route === 'GET /v1/console/webhooks')
      return json(res, 200, [{ id: HOSTILE, name: HOSTILE, url: HOSTILE, verified: false }]);
    if (route === 'POST /v1/console/webhooks')
      return json(res, 201, { id: HOSTILE, name: 'n', verified: false, private_key: HOSTILE });
    return json(res, 404, { status: 404, detail: HOSTILE });
  });
  closers.push(() => {
    for (const s of streams) s.end();
    return server.close();
  });
  return server.url;
}

function start(args: string[]) {
  const cli = runCli(built.bin, args, env);
  running.push(cli);
  return cli;
}

async function run(...args: string[]) {
  const cli = start(args);
  const code = await cli.exited;
  return { code, ...cli.raw };
}

describe('the CLI prints what the Service sends escaped', () => {
  it.each<[string, (url: string) => string[]]>([
    ['events', (url) => ['events', '--emulator', url]],
    ['trigger', (url) => ['trigger', 'ag.access_pass.issued', '--emulator', url]],
    ['resend', (url) => ['resend', 'evt_1', '--emulator', url]],
    ['webhooks list', (url) => ['webhooks', 'list', '--emulator', url]],
  ])('%s: one line, escaped', async (_name, args) => {
    const result = await run(...args(await hostileService()));
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expectEscaped(result.stdout, 1);
  });

  it('webhooks create: the id and the token shown once, each on its own line, escaped', async () => {
    const url = await hostileService();
    const result = await run(
      'webhooks',
      'create',
      '--name',
      'n',
      '--url',
      'http://127.0.0.1:9/h',
      '--emulator',
      url,
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expectEscaped(result.stdout, 2);
    expect(result.stdout.split('\n')[1]).toBe(ESCAPED);
  });

  it("a failure that quotes the Service's problem detail: one error line, escaped, exit 1", async () => {
    const result = await run('webhooks', 'verify', 'wh_1', '--emulator', await hostileService());
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expectEscaped(result.stderr, 1);
  });

  it('--json keeps every value, with C1, bidi and line separators as \\u escapes', async () => {
    const result = await run('events', '--json', '--emulator', await hostileService());
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).not.toMatch(RAW_CONTROL);
    const [view] = JSON.parse(result.stdout) as { event: { id: string } }[];
    expect(view?.event.id).toBe(HOSTILE);
  });

  it('trigger --scenario: each answer, and a mismatch quoting it, escaped', async () => {
    const url = await hostileService();
    const file = path.join(config, 'scenario.json');
    const event = buildEvent('ag.access_pass.issued', {}, { id: 'evt_s' });
    const write = (expect?: object) =>
      fs.writeFileSync(
        file,
        JSON.stringify({
          scenarioVersion: 1,
          deliveries: [{ event, layout: 'A', ...(expect ? { expect } : {}) }],
        }),
      );
    write();
    const played = await run('trigger', '--scenario', file, '--emulator', url);
    expect(played.code).toBe(0);
    // The delivery's answer, then "Played 1 deliveries".
    expectEscaped(played.stdout, 2);
    expect(played.stdout).toContain(`delivery 0, ag.access_pass.issued [evt_s] → 200 ${ESCAPED}`);
    write({ body: { status: 'processed' } });
    const failed = await run('trigger', '--scenario', file, '--emulator', url);
    expect(failed.code).toBe(1);
    expect(failed.stderr).not.toMatch(RAW_CONTROL);
    expect(failed.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(failed.stderr).toMatch(
      /^error: delivery 0, ag\.access_pass\.issued \[evt_s\]: expected body\.status "processed", got 200 /,
    );
  }, 30_000);

  it("listen: the handshake's failure, the webhook, each event and the receiver's answer, escaped", async () => {
    const url = await hostileService();
    const cli = start(['listen', '--forward-to', 'http://127.0.0.1:9/h', '--emulator', url]);
    await cli.waitFor(/^\S+ {2}<-- \[400\]/, 15_000);
    expect(await cli.interrupt()).toBe(0);
    // Ready, Forwarding, the verified webhook, the attempt leaving and its answer, Stopped.
    expectEscaped(cli.raw.stdout, 6);
    expect(cli.raw.stdout).toContain(`--> ${ESCAPED} [${ESCAPED}]`);
    expect(cli.raw.stdout).toContain(`POST ${ESCAPED} (3 ms) ${ESCAPED}; will retry`);
    // The handshake's failure, once.
    expectEscaped(cli.raw.stderr, 1);
  }, 30_000);
});
