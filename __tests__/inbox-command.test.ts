import { createEventRouter, type Inbox } from '../lib';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery } from '../lib/inbox/queued-delivery';
import { normalizeEvent } from '../lib/events/normalize-event';
import { buildEvent } from '../lib/testing';
import { builtPackage, type BuiltPackage } from './support/built-package';
import { runCli } from './support/cli-process';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually, type EngineServer } from './support/inbox-engines';
import { ESCAPED, HOSTILE, RAW_CONTROL, expectEscaped } from './support/terminal-injection';

let built: BuiltPackage;
beforeAll(async () => {
  built = await builtPackage();
}, 180_000);

/** Runs the built bin to its end. */
async function run(...args: string[]) {
  const cli = runCli(built.bin, args, built.env);
  const code = await cli.exited;
  return { code, stdout: cli.stdout.join('\n'), stderr: cli.stderr.join('\n') };
}

/** Queues one event as the receiver would. */
async function enqueue(
  inbox: Inbox,
  id: string,
  type: 'ag.access_pass.issued' | 'ag.hid_org.created' = 'ag.access_pass.issued',
) {
  const envelope = buildEvent(type, {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  await inbox.enqueue(queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null));
}

/** A queue whose worker's one try fails (every event goes to the dead letters) until `fix()`. */
async function brokenQueue(server: EngineServer, prefix: string, error = 'the CRM is down') {
  const name = `${prefix}-${process.pid}`;
  const inbox = server.inbox(name);
  let broken = true;
  const runs: string[] = [];
  const worker = await inbox.startWorker(
    createEventRouter().onAny((event) => {
      runs.push(event.id);
      if (broken) throw new Error(error);
    }),
    { attempts: 1, logger: false },
  );
  const close = async () => {
    await worker.close();
    await inbox.close();
  };
  return { name, inbox, runs, fix: () => void (broken = false), close };
}

/** A queue holding these events as dead letters, its worker then fixed: a replayed event runs. */
async function deadLetterQueue(
  server: EngineServer,
  prefix: string,
  events: [string, ('ag.access_pass.issued' | 'ag.hid_org.created')?][],
) {
  const queue = await brokenQueue(server, prefix);
  try {
    for (const [id, type] of events) await enqueue(queue.inbox, id, type);
    const count = events.length;
    await eventually(`${count} dead letters`, async () => (await queue.inbox.status()).dead === count);
  } catch (error) {
    await queue.close();
    throw error;
  }
  queue.fix();
  return { ...queue, url: ['--url', server.url, '--name', queue.name] };
}

describeEachEngine('service-webhooks inbox on $name', (engine, server) => {
  it('shows the status and the dead letters, and replays one event, once', async () => {
    const { name, inbox, runs, fix, close } = await brokenQueue(server(), 'cli');
    try {
      await enqueue(inbox, 'evt_cli_dead');
      await eventually('a dead letter', async () => (await inbox.status()).dead === 1);
      const url = ['--url', server().url, '--name', name];

      const status = await run('inbox', 'status', ...url);
      expect(status).toMatchObject({ code: 0, stderr: '' });
      expect(status.stdout).toMatch(
        new RegExp(
          `^${engine.name}: 0 waiting, 0 delayed, 0 running, 1 dead letters \\(1 open issue\\), oldest waiting none, oldest delayed none$`,
        ),
      );

      const dead = await run('inbox', 'dead-letters', ...url, '--json');
      expect(dead.code).toBe(0);
      expect(JSON.parse(dead.stdout)).toMatchObject([
        {
          attempts: 1,
          lastError: expect.stringMatching(/the CRM is down/),
          delivery: { id: 'evt_cli_dead' },
        },
      ]);
      expect((await run('inbox', 'dead-letters', ...url)).stdout).toMatch(
        /^evt_cli_dead {2}ag\.access_pass\.issued {2}1 attempts {2}failed \S+ {2}Error: the CRM is down/,
      );

      fix();
      expect(await run('inbox', 'replay', 'evt_cli_dead', ...url)).toMatchObject({
        code: 0,
        stdout: 'replayed 1 dead letter',
      });
      expect(await run('inbox', 'replay', 'evt_cli_dead', ...url)).toMatchObject({
        code: 0,
        stdout: 'replayed 0 dead letters',
      });
      await eventually('the replayed event ran', () => runs.length === 2);
      expect((await run('inbox', 'dead-letters', ...url)).stdout).toBe('no dead letters');
    } finally {
      await close();
    }
  }, 60_000);

  it('lists the issues as a table and as JSON, counts them in status, and replays one issue', async () => {
    const { name, inbox, runs, fix, close } = await brokenQueue(server(), 'cli-issues');
    try {
      for (const id of ['evt_i_1', 'evt_i_2', 'evt_i_3']) await enqueue(inbox, id);
      await enqueue(inbox, 'evt_i_4', 'ag.hid_org.created');
      await eventually('4 dead letters', async () => (await inbox.status()).dead === 4);
      const url = ['--url', server().url, '--name', name];
      const table = await run('inbox', 'issues', ...url);
      expect(table).toMatchObject({ code: 0, stderr: '' });
      const lines = table.stdout.split('\n');
      expect(lines[0]).toMatch(/^ISSUE +COUNT +TYPE +HANDLER +LAST SEEN +ERROR$/);
      expect(lines).toHaveLength(3);
      expect(lines.slice(1)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /^[0-9a-f]{16} {2}1 {6}ag\.hid_org\.created {5}onAny +\S+Z {2}Error: the CRM is down$/,
          ),
          expect.stringMatching(
            /^[0-9a-f]{16} {2}3 {6}ag\.access_pass\.issued {2}onAny +\S+Z {2}Error: the CRM is down$/,
          ),
        ]),
      );
      const issues = JSON.parse((await run('inbox', 'issues', ...url, '--json', '--limit', '5')).stdout) as {
        key: string;
        count: number;
      }[];
      expect(issues.map((i) => i.count).sort()).toEqual([1, 3]);
      expect(JSON.parse((await run('inbox', 'status', ...url, '--json')).stdout)).toMatchObject({
        dead: 4,
        issues: 2,
      });

      fix();
      const three = issues.find((i) => i.count === 3)!;
      expect(await run('inbox', 'replay', '--issue', three.key, ...url)).toMatchObject({
        code: 0,
        stdout: 'replayed 3 dead letters',
      });
      await eventually('the three ran again', () => runs.length === 7);
      expect((await run('inbox', 'status', ...url)).stdout).toMatch(/1 dead letters \(1 open issue\)/);
    } finally {
      await close();
    }
  }, 60_000);

  it("shows each handler's state on a dead letter, lists by --handler, and replays only the handlers named by --handler", async () => {
    const name = `cli-handlers-${process.pid}`;
    const inbox = server().inbox(name);
    const down = new Set(['welcome-email', 'audit']);
    const runs: string[] = [];
    const handler = (h: string) => () => {
      runs.push(h);
      if (down.has(h)) throw new Error(`${h} is down`);
    };
    const worker = await inbox.startWorker(
      createEventRouter()
        .on('ag.access_pass.issued', handler('crm'), { name: 'crm' })
        .on('ag.access_pass.issued', handler('welcome-email'), { name: 'welcome-email' })
        .on('ag.access_pass.issued', handler('audit'), { name: 'audit' }),
      { attempts: 1, logger: false },
    );
    try {
      await enqueue(inbox, 'evt_cli_handlers');
      await eventually('a dead letter', async () => (await inbox.status()).dead === 1);
      const url = ['--url', server().url, '--name', name];
      expect((await run('inbox', 'dead-letters', ...url)).stdout).toMatch(
        /^evt_cli_handlers {2}.* {2}handlers: audit failed \(1 try\), crm ok \(1 try\), welcome-email failed \(1 try\)$/,
      );
      const json = JSON.parse((await run('inbox', 'dead-letters', ...url, '--json')).stdout) as unknown;
      expect(json).toMatchObject([
        {
          handlers: {
            crm: { ok: true },
            'welcome-email': { ok: false, lastError: 'Error: welcome-email is down' },
          },
        },
      ]);
      expect((await run('inbox', 'dead-letters', ...url, '--handler', 'audit')).stdout).toMatch(
        /^evt_cli_handlers /,
      );
      expect((await run('inbox', 'dead-letters', ...url, '--handler', 'crm')).stdout).toBe('no dead letters');

      const typo = await run('inbox', 'replay', 'evt_cli_handlers', '--handler', 'welcome-emial', ...url);
      expect(typo.code).toBe(1);
      expect(typo.stderr).toMatch(/has no handler named 'welcome-emial' \(did you mean 'welcome-email'\?\)/);
      expect((await inbox.status()).dead).toBe(1);

      down.clear();
      runs.length = 0;
      expect(
        await run(
          'inbox',
          'replay',
          'evt_cli_handlers',
          '--handler',
          'welcome-email',
          '--handler',
          'audit',
          ...url,
        ),
      ).toMatchObject({ code: 0, stdout: 'replayed 1 dead letter' });
      await eventually('the job done', async () => {
        const s = await inbox.status();
        return s.waiting + s.delayed + s.active + s.dead === 0;
      });
      expect(runs.sort()).toEqual(['audit', 'welcome-email']);
    } finally {
      await worker.close();
      await inbox.close();
    }
  }, 60_000);

  it('pauses the queue (status says so, the worker starts no try), and resumes it: the held event runs once', async () => {
    const { name, inbox, runs, fix, close } = await brokenQueue(server(), 'cli-pause');
    try {
      fix();
      const url = ['--url', server().url, '--name', name];
      expect(await run('inbox', 'pause', ...url)).toMatchObject({ code: 0, stdout: `paused ${name}` });
      expect(await run('inbox', 'pause', ...url, '--json')).toMatchObject({
        code: 0,
        stdout: '{"paused":true}',
      });
      const status = await run('inbox', 'status', ...url);
      expect(status).toMatchObject({ code: 0, stderr: '' });
      expect(status.stdout).toMatch(
        new RegExp(`^${engine.name} \\(paused: no worker starts a try; inbox resume to go on\\): 0 waiting`),
      );
      expect(JSON.parse((await run('inbox', 'status', ...url, '--json')).stdout)).toMatchObject({
        paused: true,
      });
      await enqueue(inbox, 'evt_cli_held');
      // Longer than a worker takes to read the flag and fetch: the event is held, not run.
      await eventually('the event is held', async () => (await inbox.status()).waiting === 1);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(runs).toEqual([]);

      expect(await run('inbox', 'resume', ...url)).toMatchObject({ code: 0, stdout: `resumed ${name}` });
      await eventually('the held event ran', () => runs.length === 1);
      expect(runs).toEqual(['evt_cli_held']);
      expect((await run('inbox', 'status', ...url)).stdout).toMatch(new RegExp(`^${engine.name}: 0 waiting`));
    } finally {
      await close();
    }
  }, 60_000);

  it('prints a dead letter whose id and error were written to take over a terminal escaped, one line (issue 28 item 8)', async () => {
    const { name, inbox, close } = await brokenQueue(server(), 'cli-escape', HOSTILE);
    try {
      await enqueue(inbox, HOSTILE);
      await eventually('a dead letter', async () => (await inbox.status()).dead === 1);
      const url = ['--url', server().url, '--name', name];

      const text = runCli(built.bin, ['inbox', 'dead-letters', ...url], built.env);
      expect(await text.exited).toBe(0);
      expectEscaped(text.raw.stdout, 1);
      const [before, after] = text.raw.stdout.split('  failed ');
      expect(before).toBe(`${ESCAPED}  ag.access_pass.issued  1 attempts`);
      expect(after).toMatch(/^\S+ {2}Error: /);
      expect(after?.endsWith(`Error: ${ESCAPED}\n`)).toBe(true);

      const json = runCli(built.bin, ['inbox', 'dead-letters', ...url, '--json'], built.env);
      expect(await json.exited).toBe(0);
      expect(json.raw.stdout).not.toMatch(RAW_CONTROL);
      expect(JSON.parse(json.raw.stdout)).toMatchObject([
        { delivery: { id: HOSTILE }, lastError: expect.stringContaining(HOSTILE) },
      ]);
    } finally {
      await close();
    }
  }, 60_000);

  it('replays with --type and --since exactly the dead letters that match', async () => {
    const { name, inbox, runs, fix, close } = await brokenQueue(server(), 'cli-filter');
    try {
      await enqueue(inbox, 'pass-old');
      await enqueue(inbox, 'pass-new');
      await enqueue(inbox, 'org-old', 'ag.hid_org.created');
      await enqueue(inbox, 'org-new', 'ag.hid_org.created');
      await eventually('4 dead letters', async () => (await inbox.status()).dead === 4);
      // The "old" ones failed two hours ago.
      await server().backdate(name, ['pass-old', 'org-old'], new Date(Date.now() - 2 * 3_600_000));
      fix();
      const url = ['--url', server().url, '--name', name];
      const dead = async () => (await inbox.deadLetters()).map((d) => d.delivery.id).sort();

      expect(await run('inbox', 'replay', '--type', 'ag.hid_org.created', ...url)).toMatchObject({
        code: 0,
        stdout: 'replayed 2 dead letters',
      });
      expect(await dead()).toEqual(['pass-new', 'pass-old']);
      expect(
        await run('inbox', 'replay', '--type', 'ag.hid_org.created', '--since', '1h', ...url),
      ).toMatchObject({ code: 0, stdout: 'replayed 0 dead letters' });
      expect(await run('inbox', 'replay', '--since', '1h', ...url, '--json')).toMatchObject({
        code: 0,
        stdout: '{"replayed":1}',
      });
      expect(await dead()).toEqual(['pass-old']);
      await eventually('the replayed events ran', () => runs.length === 7);
      expect(runs.slice(4).sort()).toEqual(['org-new', 'org-old', 'pass-new']);
    } finally {
      await close();
    }
  }, 60_000);

  it('replays nothing with --type of a type no dead letter has; every dead letter stays (issue 28)', async () => {
    const { inbox, runs, url, close } = await deadLetterQueue(server(), 'cli-type-none', [
      ['pass-1'],
      ['pass-2'],
    ]);
    try {
      expect(await run('inbox', 'replay', '--type', 'ag.hid_org.created', ...url, '--json')).toMatchObject({
        code: 0,
        stdout: '{"replayed":0}',
      });
      expect((await inbox.deadLetters()).map((d) => d.delivery.id).sort()).toEqual(['pass-1', 'pass-2']);
      expect((await inbox.status()).waiting).toBe(0);
      expect(runs).toHaveLength(2);
    } finally {
      await close();
    }
  }, 60_000);

  it('pages the dead letters with --after and --before, the text saying how to read the next page', async () => {
    const { url, close } = await deadLetterQueue(server(), 'cli-pages', [['page-a'], ['page-b'], ['page-c']]);
    try {
      const ids = (stdout: string) => stdout.split('\n').map((line) => line.split('  ')[0]);
      const first = await run('inbox', 'dead-letters', ...url, '--limit', '2');
      expect(first.code).toBe(0);
      expect(ids(first.stdout)).toHaveLength(2);
      // A full page ends with the command for the next one, on stderr: the lines stay one letter each.
      const hint = /^a full page of 2: --after (\S+) for the next, older ones$/.exec(first.stderr);
      expect(hint).not.toBeNull();
      const next = await run('inbox', 'dead-letters', ...url, '--limit', '2', '--after', hint![1]!);
      expect(next).toMatchObject({ code: 0, stderr: '' });
      expect(ids(next.stdout)).toHaveLength(1);
      // Each dead letter once across the pages, newest first as --json orders them.
      const all = JSON.parse((await run('inbox', 'dead-letters', ...url, '--json')).stdout) as {
        delivery: { id: string };
        cursor: string;
      }[];
      expect([...ids(first.stdout), ...ids(next.stdout)]).toEqual(all.map((d) => d.delivery.id));
      expect(new Set(all.map((d) => d.delivery.id))).toEqual(new Set(['page-a', 'page-b', 'page-c']));
      // --before the oldest: the two newer ones, still newest first, and how to read newer still.
      const before = await run('inbox', 'dead-letters', ...url, '--limit', '2', '--before', all[2]!.cursor);
      expect(before.code).toBe(0);
      expect(ids(before.stdout)).toEqual(all.slice(0, 2).map((d) => d.delivery.id));
      expect(before.stderr).toBe(`a full page of 2: --before ${all[0]!.cursor} for the newer ones`);
      const json = await run('inbox', 'dead-letters', ...url, '--json', '--after', all[0]!.cursor);
      expect((JSON.parse(json.stdout) as typeof all).map((d) => d.delivery.id)).toEqual(
        all.slice(1).map((d) => d.delivery.id),
      );
    } finally {
      await close();
    }
  }, 60_000);

  it('replays with --type and --since only the recent ones of that type, not every recent one (issue 28)', async () => {
    const { inbox, runs, url, close } = await deadLetterQueue(server(), 'cli-type-since', [
      ['pass-new'],
      ['org-new', 'ag.hid_org.created'],
    ]);
    try {
      expect(
        await run('inbox', 'replay', '--type', 'ag.access_pass.issued', '--since', '1h', ...url),
      ).toMatchObject({ code: 0, stdout: 'replayed 1 dead letter' });
      await eventually('the replayed event ran', () => runs.length === 3);
      expect(runs[2]).toBe('pass-new');
      expect((await inbox.deadLetters()).map((d) => d.delivery.id)).toEqual(['org-new']);
    } finally {
      await close();
    }
  }, 60_000);
});

describe('service-webhooks inbox, called wrong', () => {
  it.each([
    [['inbox', 'status'], /give the queue as --url redis:\/\/… or --url postgres:\/\//],
    [
      ['inbox', 'status', '--url', 'mysql://db'],
      /--url must start redis:\/\/, rediss:\/\/, postgres:\/\/ or postgresql:\/\//,
    ],
    [
      ['inbox', 'replay', '--url', 'redis://127.0.0.1:1'],
      /give an event id, or --type \/ --since \/ --issue, or --all/,
    ],
    [
      ['inbox', 'issues', '--url', 'redis://127.0.0.1:1', '--limit', '1001'],
      /--limit must be a whole number from 1 to 1000$/m,
    ],
    [
      ['inbox', 'replay', '--all', '--handler', 'crm', '--url', 'redis://127.0.0.1:1'],
      /--handler replays one event: give its id/,
    ],
    [
      ['inbox', 'dead-letters', '--url', 'redis://127.0.0.1:1', '--limit', '0'],
      /--limit must be a whole number/,
    ],
    [
      ['inbox', 'dead-letters', '--url', 'redis://127.0.0.1:1', '--limit', '100001'],
      /--limit must be a whole number from 1 to 100000/,
    ],
    [
      ['inbox', 'dead-letters', '--url', 'redis://127.0.0.1:1', '--after', 'not a cursor'],
      /^error: --after must be a dead letter's cursor, as inbox dead-letters prints it after a full page \(or --json in "cursor"\) \(got "not a cursor"\)$/,
    ],
    [
      // Base64url, but not of a position: refused as well, before the queue is asked.
      ['inbox', 'dead-letters', '--url', 'redis://127.0.0.1:1', '--before', 'eyJhIjoxfQ'],
      /^error: --before must be a dead letter's cursor/,
    ],
    [
      [
        'inbox',
        'dead-letters',
        '--url',
        'redis://127.0.0.1:1',
        '--after',
        'WzEsImEiXQ',
        '--before',
        'WzEsImEiXQ',
      ],
      /^error: give --after \(the next, older page\) or --before \(the newer page\), not both$/,
    ],
    [
      ['inbox', 'replay', '--since', 'yesterday', '--url', 'redis://127.0.0.1:1'],
      /--since must be a duration/,
    ],
    // Past ten years the date to replay from is invalid (issue 28): a usage error, as any bad duration.
    [
      ['inbox', 'replay', '--since', '100000000000000000000h', '--url', 'redis://127.0.0.1:1'],
      /--since must be at most 87600h \(got "100000000000000000000h"\)/,
    ],
    [
      [
        'inbox',
        'replay',
        '--type',
        'ag.hid_org.created',
        '--since',
        '87601h',
        '--url',
        'redis://127.0.0.1:1',
      ],
      /--since must be at most 87600h/,
    ],
    // Past 2^31 - 1 ms Node fires a timer at once: the command would give up before it asked.
    [
      ['inbox', 'status', '--url', 'redis://127.0.0.1:1', '--timeout', '1000h'],
      /--timeout must be at most 24h/,
    ],
    [
      ['inbox', 'status', '--url', 'redis://127.0.0.1:1', '--timeout', 'soon'],
      /--timeout must be a duration/,
    ],
    [
      ['inbox', 'status', '--url', 'redis://127.0.0.1:1', '--timeout', '0'],
      /--timeout must be longer than 0/,
    ],
  ])('%j exits 2, saying what to type', async (args, message) => {
    const result = await run(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });
});

describe('service-webhooks inbox, the queue unreachable', () => {
  // Nothing listens on port 1: BullMQ's connection would queue commands forever without the bound;
  // pg-boss is refused at once. The password must not reach the terminal.
  it.each([
    [
      ['status'],
      'redis://:s3cret@127.0.0.1:1',
      /^error: no answer from the bullmq queue at redis:\/\/:\*\*\*@127\.0\.0\.1:1 within 10 s; check --url and that the server runs/,
    ],
    [['dead-letters', '--timeout', '1s'], 'redis://127.0.0.1:1', /within 1 s; check --url/],
    [['replay', '--all', '--timeout', '1s'], 'redis://127.0.0.1:1', /within 1 s; check --url/],
    [
      ['status'],
      'postgres://sw:s3cret@127.0.0.1:1/db',
      /^error: could not reach the pg-boss queue at postgres:\/\/sw:\*\*\*@127\.0\.0\.1:1\/db \(ECONNREFUSED\); check --url and that the server runs/,
    ],
    [['dead-letters'], 'postgres://127.0.0.1:1/db', /could not reach the pg-boss queue/],
    [['replay', '--all'], 'postgres://127.0.0.1:1/db', /could not reach the pg-boss queue/],
  ])(
    'inbox %j --url %s exits 1 within its bound, saying what to check',
    async (sub, url, message) => {
      const cli = runCli(built.bin, ['inbox', ...sub, '--url', url], built.env);
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        cli.exited,
        new Promise((resolve) => (timer = setTimeout(resolve, 20_000, 'still running after 20 s'))),
      ]);
      clearTimeout(timer);
      if (code === 'still running after 20 s') cli.child.kill('SIGKILL');
      expect(code).toBe(1);
      expect(cli.stderr).toHaveLength(1);
      expect(cli.stderr[0]).toMatch(message);
      expect(cli.stderr[0]).not.toMatch(/s3cret/);
    },
    30_000,
  );
});
