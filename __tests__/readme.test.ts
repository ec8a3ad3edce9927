import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express, { type Express, type RequestHandler } from 'express';
import request from 'supertest';
import {
  allBlocks,
  docFiles,
  FAULTY_MARKDOWN,
  parseBlocks,
  runBlocks,
  typeErrors,
  type Block,
} from './support/readme-blocks';
import { deliverEvent, sendHandshake } from 'service-webhooks/testing';

const ROOT = path.join(__dirname, '..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

const BLOCKS = allBlocks();
const blockIn = (heading: string, nth = 0): Block => {
  const block = BLOCKS.filter((b) => b.heading === heading)[nth];
  if (block === undefined) throw new Error(`no ts block under "${heading}"`);
  return block;
};

describe('every ts block of the README and of docs/*.md', () => {
  let errors: Map<string, string[]>;
  beforeAll(() => {
    errors = typeErrors(BLOCKS);
  }, 120_000);

  it('is found, with its markers understood, in the README and in the guides', () => {
    expect(BLOCKS.length).toBeGreaterThanOrEqual(8);
    expect(new Set(BLOCKS.map((b) => b.file)).size).toBe(BLOCKS.length);
    expect(BLOCKS.filter((b) => b.doc === 'README.md').length).toBeGreaterThanOrEqual(1);
    expect(new Set(BLOCKS.map((b) => b.doc)).size).toBeGreaterThanOrEqual(8);
  });

  it.each(BLOCKS.map((b) => [`${b.doc}:${b.line}`, b.heading, b] as const))(
    'the block at %s (%s) type-checks under strict + noUncheckedIndexedAccess + exactOptionalPropertyTypes',
    (_line, _heading, block) => {
      expect(errors.get(block.file)).toEqual([]);
    },
  );
});

describe('the Redis examples can be copied one at a time', () => {
  const clients = BLOCKS.filter((b) => /createClient\(|new Redis\(/.test(b.code));

  it('finds them', () => {
    expect(clients.length).toBeGreaterThanOrEqual(2);
  });

  it.each(clients.map((b) => [`${b.doc}:${b.line}`, b] as const))(
    'the block at %s uses one client and listens for its errors',
    (_line, block) => {
      // One client per block: copying a block needs one package and opens one connection.
      expect(/from 'redis'/.test(block.code) && /from 'ioredis'/.test(block.code)).toBe(false);
      // Without an 'error' listener a dropped connection is an unhandled error event.
      expect(block.code).toMatch(/\.on\('error'/);
    },
  );
});

describe('the type check itself', () => {
  // The two failures issue 11 found in the README, so this check is known to catch them.
  it('reports an untyped callback parameter and an optional value used as required', () => {
    const bad = parseBlocks(FAULTY_MARKDOWN);
    const found = typeErrors(bad).get(bad[0]?.file ?? '') ?? [];
    expect(found.map((e) => /TS\d+/.exec(e)?.[0])).toEqual(expect.arrayContaining(['TS7006', 'TS2322']));
    expect(found[0]).toMatch(/^README\.md:4: TS7006/);
  }, 120_000);

  it('refuses a marker word it does not know, and a ```typescript fence it would skip', () => {
    expect(() => parseBlocks('<!-- readme-test: runn -->\n```ts\nx\n```')).toThrow(
      /unknown readme-test word "runn"/,
    );
    expect(() => parseBlocks('```typescript\nx\n```')).toThrow(/write ```ts/);
    expect(() => parseBlocks('\n```tsx\nx\n```', 'docs/guide.md')).toThrow(/^docs\/guide\.md:2: write ```ts/);
  });
});

describe('the README runs', () => {
  it('shows the two commands on its first screen', () => {
    const firstScreen = README.split('\n').slice(0, 20).join('\n');
    expect(firstScreen).toContain('npm install && npm run demo');
    expect(firstScreen).toContain('npm test');
  });

  it('names the runtime bootstrap CI runs, before the quick start, as one command to paste', () => {
    const command = 'eval "$(bash scripts/bootstrap-runtimes.sh --node)"';
    const at = README.indexOf(`\n${command}\n`);
    expect(at).toBeGreaterThan(-1);
    expect(at).toBeLessThan(README.indexOf('\n## Quick start\n'));
    expect(readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8')).toContain(
      'bash scripts/bootstrap-runtimes.sh --env',
    );
    const script = readFileSync(path.join(ROOT, 'scripts', 'bootstrap-runtimes.sh'), 'utf8');
    expect(script).toContain('"$mode" = "--node"');
    expect(script).toContain('"$mode" = "--env"');
  });

  it('is what a newcomer reads first, at most 400 lines; the guides are in docs/', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(400);
  });

  it('lists every guide of docs/ under "Guides", each once', () => {
    const start = README.indexOf('\n## Guides\n');
    expect(start).toBeGreaterThan(-1);
    const list = README.slice(start, README.indexOf('\n## ', start + 1));
    const linked = [...list.matchAll(/^- \[[^\]]+\]\((docs\/[^)#]+\.md)\)/gm)].map((m) => m[1]);
    expect([...linked].sort()).toEqual(docFiles().filter((doc) => doc !== 'README.md'));
  });

  it('runs the quick-start example as written', async () => {
    process.env.SERVICE_WEBHOOK_TOKEN = 'tok_readme';
    const logs: string[] = [];
    const log = jest.spyOn(console, 'log').mockImplementation((line: string) => void logs.push(line));
    const warn = jest.spyOn(console, 'warn').mockImplementation((line: string) => void logs.push(line));
    try {
      const quickStart = blockIn('Quick start');
      expect(quickStart.run).toBe(true);
      const { app } = runBlocks([quickStart], ['app']).get(quickStart.file) as { app: Express };
      const options = { token: 'tok_readme', path: '/webhooks' };
      await sendHandshake(app, { path: '/webhooks', challenge: 'chl_readme' }).expect(200, {
        challenge: 'chl_readme',
      });
      await deliverEvent(app, 'ag.access_pass.issued', { id: 'ap_1' }, options).expect(200);
      await deliverEvent(app, 'ag.access_pass.devices.added', {}, { ...options, layout: 'B' }).expect(200);
      await deliverEvent(app, 'ag.account_balance.low', {}, options).expect(200);
      await deliverEvent(app, 'ag.hid_org.created', {}, options).expect(200);
      await deliverEvent(app, 'ag.hid_org.created', {}, { ...options, token: 'wrong' }).expect(401);
      expect(logs).toEqual([
        'pass ap_1 issued, card 100234',
        'ag.access_pass.devices.added: device dev_5c2e91aa',
        'balance 42.5 is 57.5 below threshold',
        // A refused delivery leaves one warning, message first, and never the token.
        '[service-webhooks] refused a delivery: bearer token invalid; the Service will retry it and drop it after 6 hours reason="token-invalid"',
      ]);
      expect(logs.join('\n')).not.toContain('wrong');
    } finally {
      log.mockRestore();
      warn.mockRestore();
    }
  });

  it('runs the steps example as written: handshake, auth, its 256kb limit, dispatch', async () => {
    process.env.SERVICE_WEBHOOK_TOKEN = 'tok_steps';
    const steps = blockIn('The steps, for your own pipeline');
    expect(steps.run).toBe(true);
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const { app } = runBlocks([steps], ['app']).get(steps.file) as { app: Express };
      const options = { token: 'tok_steps', path: '/webhooks' };
      await sendHandshake(app, { path: '/webhooks', challenge: 'chl_steps' }).expect(200, {
        challenge: 'chl_steps',
      });
      await deliverEvent(app, 'ag.access_pass.issued', {}, options).expect(200);
      await deliverEvent(app, 'ag.access_pass.issued', {}, { ...options, token: 'wrong' }).expect(401);
      const big = { metadata: { pad: 'x'.repeat(300 * 1024) } };
      const res = await deliverEvent(app, 'ag.card_template.created', big, options).expect(413);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(log).toHaveBeenCalledWith(
        expect.stringMatching(/^delivery [0-9a-f-]{36} ag\.access_pass\.issued$/),
      );
    } finally {
      log.mockRestore();
      warn.mockRestore();
    }
  });
});

describe('the options examples (docs/options.md) run', () => {
  const heading = '`webhookReceiver(options)`';

  it('reads tokens from a file through a function, cached for 30 s, and follows a rotation', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'readme-tokens-'));
    const file = path.join(dir, 'tokens');
    writeFileSync(file, 'tok_file_1\n');
    process.env.SERVICE_WEBHOOK_TOKENS_FILE = file;
    const realNow = Date.now.bind(Date);
    let offset = 0;
    const now = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
    try {
      const block = blockIn(heading, 0);
      expect(block.run).toBe(true);
      const { receiver } = runBlocks([block], ['receiver']).get(block.file) as { receiver: RequestHandler };
      const app = express().use('/webhooks', receiver);
      const send = (token: string) =>
        deliverEvent(app, 'ag.hid_org.created', {}, { token, path: '/webhooks' });
      await send('tok_file_1').expect(200);
      writeFileSync(file, 'tok_file_1\ntok_file_2\n');
      await send('tok_file_2').expect(401); // the cache still holds the first read
      offset = 31_000;
      await send('tok_file_2').expect(200);
      await send('tok_file_1').expect(200);
    } finally {
      now.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('mounts the receiver before the app-wide parser: no warning, and the app still parses its own JSON', async () => {
    process.env.SERVICE_WEBHOOK_TOKEN = 'tok_order';
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const block = blockIn(heading, 1);
      expect(block.run).toBe(true);
      const { app } = runBlocks([block], ['app']).get(block.file) as { app: Express };
      await deliverEvent(app, 'ag.hid_org.created', {}, { token: 'tok_order', path: '/webhooks' }).expect(
        200,
      );
      await request(app)
        .post('/orders')
        .send({ n: 1 })
        .expect(200, { received: { n: 1 } });
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});

describe('the testing example (docs/testing.md) is complete, and is what runs', () => {
  const body = (text: string) =>
    text
      .split('\n')
      // Imports differ (the fixture's path), and so may comments; the code must not.
      .filter((line) => !line.startsWith('import ') && line.trim() !== '' && !line.trim().startsWith('//'))
      .map((line) => line.trim())
      .join('\n');

  it('shows the app it tests: the app block is __tests__/fixtures/user-app.ts, word for word', () => {
    const app = blockIn('Testing your receiver', 0);
    expect(app.file).toBe('src/app.ts');
    expect(app.code).toBe(readFileSync(path.join(__dirname, 'fixtures', 'user-app.ts'), 'utf8'));
  });

  it('is the test that runs in __tests__/testing.test.ts', () => {
    const example = blockIn('Testing your receiver', 1);
    expect(example.code).toContain("from '../src/app'");
    const test = readFileSync(path.join(__dirname, 'testing.test.ts'), 'utf8');
    const region = test.slice(
      test.indexOf('// docs/testing.md:start') + '// docs/testing.md:start'.length,
      test.indexOf('// docs/testing.md:end'),
    );
    expect(body(example.code)).toBe(body(region));
  });
});
