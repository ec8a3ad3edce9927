import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { createEventRouter, webhookReceiver } from 'service-webhooks';
import { signPayload } from 'service-webhooks/console';
import { builtPackage, type BuiltPackage } from './support/built-package';
import { cliRunners } from './support/cli-process';
import { listen } from './support/listen';
import { freePort } from './support/server-binary';

let built: BuiltPackage;
let env: NodeJS.ProcessEnv;
const closers: (() => Promise<void>)[] = [];

const { run, start, running } = cliRunners(() => ({ bin: built.bin, env }));

/** A customer's app with the public receiver, holding `token` from the start. */
async function customerApp(token: string) {
  const seen: { id: string; name: unknown }[] = [];
  const router = createEventRouter().on('ag.access_pass.issued', (event) => {
    seen.push({ id: event.id, name: event.data.full_name });
  });
  const app = express();
  app.use('/webhooks', webhookReceiver({ bearerTokens: [token], router, logger: false }));
  const server = await listen(app);
  closers.push(server.close);
  return { url: `${server.url}/webhooks`, seen };
}

beforeAll(async () => {
  built = await builtPackage();
}, 180_000);

const configs: string[] = [];
beforeEach(() => {
  const config = fs.mkdtempSync(path.join(os.tmpdir(), 'sw-cli-config-'));
  configs.push(config);
  env = { ...built.env, SERVICE_WEBHOOKS_CONFIG_DIR: config, NO_COLOR: '' };
  delete env.SERVICE_BASE_URL;
  delete env.SERVICE_ACCOUNT_ID;
  delete env.SERVICE_SECRET_KEY;
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((cli) => cli.interrupt()));
  await Promise.all(closers.splice(0).map((close) => close()));
  for (const config of configs.splice(0)) fs.rmSync(config, { recursive: true, force: true });
});

describe('service-webhooks emulator', () => {
  it('prints its console URL, account and secret, answers the console API, and stops on Ctrl-C', async () => {
    const emulator = start('emulator', '--port', '0', '--retry-window', '10m', '--fast-retries');
    const url = (await emulator.waitFor(/Console API \(baseUrl\):/)).split(/\s+/).at(-1) as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await emulator.waitFor(/Web console: +http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(emulator.lines.join('\n')).toMatch(/Account id: +acct_emulator\n.*Secret key: +[0-9a-f]{64}/);

    const list = await run('webhooks', 'list', '--emulator', url, '--json');
    expect(list).toMatchObject({ code: 0, stdout: ['[]'] });
    expect((await fetch(`${url}/`)).headers.get('content-type')).toMatch(/^text\/html/);

    expect(await emulator.interrupt()).toBe(0);
    expect(emulator.lines.at(-1)).toBe('Emulator stopped.');
  });

  it('says what to do when its port is taken, exit 1', async () => {
    const first = start('emulator', '--port', '0', '--json');
    const { url } = JSON.parse(await first.waitFor(/^\{/)) as { url: string };
    const second = await run('emulator', '--port', new URL(url).port);
    expect(second.code).toBe(1);
    expect(second.stderr).toEqual([
      `error: port ${new URL(url).port} is in use; is an emulator already running? Attach to it with --emulator http://127.0.0.1:${new URL(url).port}, or choose another --port`,
    ]);
  });
});

describe('service-webhooks webhooks', () => {
  it('creates, lists, verifies and deletes through the console API, with SERVICE_* credentials', async () => {
    const emulator = start('emulator', '--port', '0', '--json');
    const { url, accountId, secretKey } = JSON.parse(await emulator.waitFor(/^\{/)) as Record<string, string>;
    env = { ...env, SERVICE_BASE_URL: url, SERVICE_ACCOUNT_ID: accountId, SERVICE_SECRET_KEY: secretKey };
    const created = await run(
      'webhooks',
      'create',
      '--name',
      'orders',
      '--url',
      'http://127.0.0.1:9/hook',
      '--events',
      'ag.hid_org.*',
      '--json',
    );
    expect(created.code).toBe(0);
    const webhook = JSON.parse(created.stdout[0] as string) as {
      id: string;
      privateKey: string;
      subscribedEvents: string[];
    };
    expect(webhook.privateKey).toMatch(/^whsk_/);
    expect(webhook.subscribedEvents).toEqual(['ag.hid_org.created', 'ag.hid_org.activated']);

    const listed = await run('webhooks', 'list');
    expect(listed.stdout).toEqual([`${webhook.id}  unverified  orders  http://127.0.0.1:9/hook`]);
    expect(await run('webhooks', 'verify', webhook.id)).toMatchObject({
      code: 0,
      stdout: [`${webhook.id}: handshake sent again`],
    });
    expect(await run('webhooks', 'delete', webhook.id)).toMatchObject({
      code: 0,
      stdout: [`Deleted ${webhook.id}`],
    });
    const gone = await run('webhooks', 'delete', webhook.id);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toEqual([
      `error: console DELETE /v1/console/webhooks/${webhook.id} answered 404: No webhook ${webhook.id} on this account.`,
    ]);
    const wrongSecret = await run('webhooks', 'list', '--secret-key', 'not-the-secret');
    expect(wrongSecret.code).toBe(1);
    expect(wrongSecret.stderr.join('\n')).not.toContain(secretKey);
  }, 30_000);
});

describe('service-webhooks listen, trigger, resend, events', () => {
  it('forwards to a real receiver, prints each attempt, and a second process triggers and resends', async () => {
    const token = (await run('listen', '--print-token')).stdout[0] as string;
    expect(token).toMatch(/^whsk_local_/);
    expect((await run('listen', '--print-token')).stdout[0]).toBe(token);
    const app = await customerApp(token);

    const listener = start('listen', '--forward-to', app.url, '--port', '0', '--events', 'ag.access_pass.*');
    expect(await listener.waitFor(/^Ready!/)).toBe(`Ready! Your delivery token is ${token} (^C to quit)`);
    await listener.waitFor(/^Webhook wh_\w+ verified: /);

    const trigger = await run('trigger', 'ag.access_pass.issued', '--set', 'data.full_name=Ada');
    expect(trigger.code).toBe(0);
    const eventId = /\[([\w-]+)\]/.exec(trigger.stdout[0] ?? '')?.[1] as string;
    expect(trigger.stdout[0]).toBe(`Triggered ag.access_pass.issued [${eventId}] in layout A → 1 webhook`);
    await listener.waitFor(new RegExp(`--> ag\\.access_pass\\.issued \\[${eventId}\\]$`));
    const answered = await listener.waitFor(/<-- \[200\] POST .* processed$/);
    expect(answered).toMatch(
      new RegExp(`<-- \\[200\\] POST ${app.url.replace(/[.]/g, '\\.')} \\(\\d+ ms\\) processed$`),
    );
    expect(app.seen).toEqual([{ id: eventId, name: 'Ada' }]);

    expect((await run('resend', eventId)).stdout).toEqual([
      `Resent ag.access_pass.issued [${eventId}] → 1 webhook(s)`,
    ]);
    await listener.waitFor(/<-- \[200\] POST .* duplicate$/);
    expect(app.seen).toHaveLength(1);

    const events = JSON.parse((await run('events', '--json')).stdout[0] as string) as {
      event: { id: string };
      deliveries: { state: string }[];
    }[];
    expect(events[0]?.event.id).toBe(eventId);
    expect(events[0]?.deliveries.map((d) => d.state)).toEqual(['acknowledged', 'acknowledged']);
    // Shown as one webhook with two deliveries, not as the same webhook twice.
    const listed = (await run('events')).stdout.find((line) => line.includes(eventId)) as string;
    expect(listed).toMatch(/: acknowledged ×2 \(2 deliveries, 2 attempts\)/);
    expect(listed.match(/wh_[0-9a-f]+:/g)).toHaveLength(1);

    const notSubscribed = await run('trigger', 'ag.hid_org.created');
    expect(notSubscribed).toMatchObject({ code: 0 });
    expect(notSubscribed.stderr.join('\n')).toMatch(/No verified webhook receives it/);

    expect(await listener.interrupt()).toBe(0);
    expect(listener.lines.some((line) => line.includes('\u001b['))).toBe(false);
  }, 60_000);

  it('says why the handshake fails and keeps trying until the app takes the token', async () => {
    const app = await customerApp('a_different_token_0123456789');
    const listener = start(
      'listen',
      '--forward-to',
      app.url,
      '--port',
      '0',
      '--token',
      'the_listen_token_0123456789',
    );
    await listener.waitFor(/^Ready! Your delivery token is the_listen_token_0123456789/);
    const failure = await listener.waitFor(/^Handshake to /);
    expect(failure).toBe(
      `Handshake to ${app.url} failed, [401]: The bearer token is not one this receiver accepts; check it matches the webhook's token. Is the app running with this token (the_listen_token_0123456789)? Retrying every 2 s.`,
    );
    expect(listener.stderr).toContain(failure);
  });

  it('attaches to a running emulator with --emulator, and exits 1 when it goes away', async () => {
    const emulator = start('emulator', '--port', '0', '--json');
    const { url } = JSON.parse(await emulator.waitFor(/^\{/)) as { url: string };
    const token = (await run('listen', '--print-token')).stdout[0] as string;
    const app = await customerApp(token);
    const listener = start('listen', '--forward-to', app.url, '--emulator', url);
    await listener.waitFor(/verified/);
    expect(listener.lines).toContain(`Forwarding 27 event types from ${url} to ${app.url}`);
    expect(await emulator.interrupt()).toBe(0);
    expect(await listener.exited).toBe(1);
    expect(listener.stderr.at(-1)).toBe(
      `error: the emulator at ${url} stopped; start it again, then \`service-webhooks listen\``,
    );
  }, 30_000);

  it('finds the running emulator in every command: listen attaches to it, webhooks list reads it', async () => {
    const port = String(await freePort());
    const emulator = start('emulator', '--port', port, '--json');
    const { url } = JSON.parse(await emulator.waitFor(/^\{/)) as { url: string };
    const token = (await run('listen', '--print-token')).stdout[0] as string;
    const app = await customerApp(token);
    // No --emulator: the emulator on the port is attached to instead of "port in use".
    const listener = start('listen', '--forward-to', app.url, '--port', port);
    await listener.waitFor(/verified/);
    expect(listener.lines).toContain(`Attached to the emulator already running at ${url}`);
    // No --emulator and no SERVICE_BASE_URL: the same emulator, as trigger and events find it.
    const list = await run('webhooks', 'list', '--json');
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout.join('\n'))).toEqual(
      expect.arrayContaining([expect.objectContaining({ url: app.url, verified: true })]),
    );
    expect(await listener.interrupt()).toBe(0);
    expect(await emulator.interrupt()).toBe(0);
  }, 30_000);

  it('listen finds the emulator as every command does: the one last started, or $SERVICE_WEBHOOKS_EMULATOR (issue 22 item 2)', async () => {
    const emulator = start('emulator', '--port', String(await freePort()), '--json');
    const { url } = JSON.parse(await emulator.waitFor(/^\{/)) as { url: string };
    const token = (await run('listen', '--print-token')).stdout[0] as string;
    const app = await customerApp(token);
    const forwarding = `Forwarding 27 event types from ${url} to ${app.url}`;
    // No --emulator, no --port: the emulator the state file names, not a second one on 4010.
    const listener = start('listen', '--forward-to', app.url);
    await listener.waitFor(/verified/);
    expect(listener.lines).toEqual(
      expect.arrayContaining([`Attached to the emulator already running at ${url}`, forwarding]),
    );
    expect(await listener.interrupt()).toBe(0);

    // A fresh config dir knows no emulator: $SERVICE_WEBHOOKS_EMULATOR names it.
    const config = fs.mkdtempSync(path.join(os.tmpdir(), 'sw-cli-config-'));
    configs.push(config);
    env = { ...env, SERVICE_WEBHOOKS_CONFIG_DIR: config, SERVICE_WEBHOOKS_EMULATOR: url };
    fs.writeFileSync(path.join(config, 'state.json'), JSON.stringify({ token }));
    const named = start('listen', '--forward-to', app.url, '--port', '0');
    await named.waitFor(/verified/);
    expect(named.lines).toContain(forwarding);
    expect(await named.interrupt()).toBe(0);
    expect(await emulator.interrupt()).toBe(0);

    // Named but gone: one line, exit 1, no emulator started in its place.
    const gone = await run('listen', '--forward-to', app.url, '--port', '0');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toEqual([
      `error: no emulator answers at ${url} ($SERVICE_WEBHOOKS_EMULATOR); start it with \`service-webhooks emulator\`, or unset it to let listen start one`,
    ]);
    // Remembered but gone: forgotten, and listen starts its own.
    delete env.SERVICE_WEBHOOKS_EMULATOR;
    fs.writeFileSync(path.join(config, 'state.json'), JSON.stringify({ token, emulatorUrl: url }));
    const fresh = start('listen', '--forward-to', app.url, '--port', '0');
    const line = await fresh.waitFor(/^Forwarding /);
    expect(line).not.toContain(url);
    expect(fresh.lines.some((l) => l.startsWith('Attached'))).toBe(false);
  }, 60_000);

  it('takes --layout B and --duplicate from a second process', async () => {
    const token = (await run('listen', '--print-token')).stdout[0] as string;
    const app = await customerApp(token);
    const listener = start('listen', '--forward-to', app.url, '--port', '0', '--layout', 'B');
    await listener.waitFor(/verified/);
    const trigger = await run(
      'trigger',
      'ag.access_pass.issued',
      '--set',
      'data.access_pass_id=ap_B',
      '--duplicate',
      '2',
    );
    expect(trigger.stdout[0]).toMatch(/in layout B → 1 webhook, sent 2 more times$/);
    await listener.waitFor(/duplicate$/);
    await expect(listener.waitFor(/^(?!.*duplicate).*<-- \[200\].*processed$/)).resolves.toBeDefined();
    expect(app.seen.map((s) => s.id)).toHaveLength(1);
  }, 30_000);
});

describe('usage and failures', () => {
  it('prints the package version with --version', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(await run('--version')).toMatchObject({ code: 0, stdout: [version] });
  });

  it.each<[string[], RegExp]>([
    [
      ['trigger', 'ag.acess_pass.issued'],
      /unknown event type "ag\.acess_pass\.issued"; did you mean "ag\.access_pass\.issued"\?/,
    ],
    [
      ['trigger', 'ag.access_pass.issued', '--set', 'data.ful_name=Ada'],
      /layout A has no field "ful_name"; did you mean "data\.full_name"\?/,
    ],
    [
      ['trigger', 'ag.access_pass.issued', '--layout', 'B', '--set', 'data.full_name=Ada'],
      /layout B has no field "full_name"/,
    ],
    [['trigger', 'ag.access_pass.issued', '--set', 'full_name=Ada'], /did you mean "data\.full_name"\?/],
    [
      ['trigger', 'ag.access_pass.issued', '--set', 'data.details.card_numbr=1'],
      /has no field "details\.card_numbr"; did you mean "data\.details\.card_number"\?/,
    ],
    [['trigger', 'ag.access_pass.issued', '--set', 'nonsense'], /--set takes path=value/],
    [
      ['trigger', 'ag.access_pass.issued', '--layout', 'C'],
      /argument 'C' is invalid\. Allowed choices are A, B/,
    ],
    [
      ['trigger', 'ag.access_pass.issued', '--duplicate', '-1'],
      /--duplicate must be a whole number from 0 to 100/,
    ],
    [['trigger'], /missing required argument 'type'/],
    [['trigger', 'ag.access_pass.issued', '--bogus'], /unknown option '--bogus'/],
    [['listen'], /--forward-to <url> is required/],
    [['listen', '--forward-to', 'ftp://x'], /--forward-to must be an http\(s\) URL/],
    [['listen', '--forward-to', 'http://127.0.0.1:9/x', '--events', 'ag.nope.*'], /matches no event type/],
    [
      ['listen', '--forward-to', 'http://127.0.0.1:9/x', '--events', 'ag.acess_pass.*'],
      /--events pattern "ag\.acess_pass\.\*" matches no event type; did you mean "ag\.access_pass\.\*"\?/,
    ],
    [
      ['emulator', '--retry-window', 'forever'],
      /--retry-window must be a duration such as 500ms, 90s, 30m or 6h/,
    ],
    [['emulator', '--port', '0', '--retry-window', '87601h'], /--retry-window must be at most 87600h/],
    [['webhooks', 'list'], /set SERVICE_BASE_URL \(--base-url\), SERVICE_ACCOUNT_ID/],
    [['sign', '{}'], /set SERVICE_SECRET_KEY, or pass --secret-key/],
    [['events', '--limit', '0'], /--limit must be a whole number of at least 1/],
    [['lisen'], /unknown command 'lisen'/],
    [[], /Usage: service-webhooks/],
  ])('%j exits 2 with a message', async (args, message) => {
    const result = await run(...args);
    expect(result.code).toBe(2);
    expect(result.lines.join('\n')).toMatch(message);
  });

  it('exits 1 with one line when no emulator answers', async () => {
    const result = await run('trigger', 'ag.hid_org.created', '--emulator', 'http://127.0.0.1:1');
    expect(result.code).toBe(1);
    expect(result.stderr).toEqual([
      'error: no emulator answers at http://127.0.0.1:1; start one with `service-webhooks listen --forward-to <url>` or `service-webhooks emulator`, or pass --emulator <url>',
    ]);
  });

  it('exits 1 when no emulator was started and none is named', async () => {
    const result = await run('events');
    expect(result.code).toBe(1);
    expect(result.stderr[0]).toMatch(/^error: no emulator known; start one with/);
  });

  it('--help shows examples and exits 0', async () => {
    for (const command of ['listen', 'trigger', 'emulator', 'webhooks', 'sign', 'resend', 'events']) {
      const result = await run(command, '--help');
      expect(result.code).toBe(0);
      expect(result.stdout.join('\n')).toMatch(/Examples?:\n {2}\$ service-webhooks/);
    }
  }, 30_000);

  it('sign prints the spec 5.1 signature', async () => {
    const result = await run('sign', '{"a":1}', '--secret-key', 'sk_test');
    expect(result).toMatchObject({ code: 0, stdout: [signPayload('{"a":1}', 'sk_test')] });
  });
});
