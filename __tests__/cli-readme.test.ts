import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { builtPackage, type BuiltPackage } from './support/built-package';
import { runCli, type CliRun } from './support/cli-process';
import { freePort } from './support/server-binary';

const section = fs.readFileSync(path.join(__dirname, '..', 'docs', 'local-development.md'), 'utf8');
const blocks = (lang: string) =>
  [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1] as string);
/** A block's command lines, comments and blank lines left out. */
const commands = (block: string) =>
  block
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

let built: BuiltPackage;
const stops: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  built = await builtPackage();
}, 180_000);

/** Directories this file made, removed when it ends. */
const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

describe('the guide "Local development" (docs/local-development.md)', () => {
  it('shows the app and the three terminals: app, listen, trigger', () => {
    expect(blocks('js')).toHaveLength(1);
    const terminals = blocks('sh');
    expect(terminals.map((b) => b.split('\n')[0])).toEqual([
      expect.stringMatching(/^# terminal 1: your app/),
      expect.stringMatching(/^# terminal 2: /),
      expect.stringMatching(/^# terminal 3: /),
    ]);
  });

  it('runs as written: the app gets the event, listen prints each attempt, resend is a duplicate', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sw-local-dev-'));
    made.push(dir);
    fs.writeFileSync(path.join(dir, 'app.js'), blocks('js')[0] as string);
    const port = await freePort();
    // The guide's port, 3000, becomes a free one; `listen` gets --port 0 so its emulator never collides.
    const local = (line: string) => line.replace(/3000/g, String(port));
    const env: NodeJS.ProcessEnv = {
      ...built.env,
      SERVICE_WEBHOOKS_CONFIG_DIR: path.join(dir, 'config'),
      NO_COLOR: '1',
    };
    const cli = (line: string) => {
      const args = local(line)
        .replace(/^npx service-webhooks /, '')
        .split(/\s+/);
      return args[0] === 'listen' && !args.includes('--print-token') ? [...args, '--port', '0'] : args;
    };
    const [terminal1, terminal2, terminal3] = blocks('sh').map(commands) as [string[], string[], string[]];

    // Terminal 1: export SERVICE_WEBHOOK_TOKEN=$(npx service-webhooks listen --print-token); PORT=3000 node app.js
    const exported = /^export (\w+)=\$\((.*)\)$/.exec(terminal1[0] as string);
    expect(exported).not.toBeNull();
    const printed = runCli(built.bin, cli(exported?.[2] as string), env);
    expect(await printed.exited).toBe(0);
    env[exported?.[1] as string] = printed.stdout[0];
    const [assignment, ...appCommand] = local(terminal1[1] as string).split(' ');
    expect(appCommand).toEqual(['node', 'app.js']);
    const [name, value] = (assignment as string).split('=') as [string, string];
    const app = spawn(process.execPath, ['app.js'], { cwd: dir, env: { ...env, [name]: value } });
    const appLines: string[] = [];
    readline.createInterface({ input: app.stdout }).on('line', (line) => appLines.push(line));
    stops.push(() => new Promise((resolve) => (app.once('close', resolve), app.kill())));

    // Terminal 2: listen.
    expect(terminal2).toHaveLength(1);
    const listener: CliRun = runCli(built.bin, cli(terminal2[0] as string), env);
    stops.push(() => listener.interrupt());
    await listener.waitFor(/^Ready! Your delivery token is whsk_local_/);
    await listener.waitFor(/^Webhook wh_\w+ verified: /, 15_000);

    // Terminal 3: trigger, resend <event id>, events.
    const [trigger, resend, events] = terminal3 as [string, string, string];
    const triggered = runCli(built.bin, cli(trigger), env);
    expect(await triggered.exited).toBe(0);
    const eventId = /\[([\w-]+)\]/.exec(triggered.stdout[0] ?? '')?.[1] as string;
    await listener.waitFor(/<-- \[200\] POST http:\/\/localhost:\d+\/webhooks \(\d+ ms\) processed$/);
    expect(appLines).toContain('pass ap_7d41b0e2 issued to Ada');

    expect(resend).toBe('npx service-webhooks resend <event id>');
    const resent = runCli(built.bin, cli(resend.replace('<event id>', eventId)), env);
    expect(await resent.exited).toBe(0);
    await listener.waitFor(/<-- \[200\] POST .* duplicate$/);
    expect(appLines.filter((line) => line.startsWith('pass '))).toHaveLength(1);

    const listed = runCli(built.bin, cli(events), env);
    expect(await listed.exited).toBe(0);
    expect(listed.stdout[0]).toContain(`ag.access_pass.issued  [${eventId}]`);

    expect(await listener.interrupt()).toBe(0);
  }, 60_000);
});
