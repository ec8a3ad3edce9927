import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express, { type Express, type RequestHandler } from 'express';
import request from 'supertest';
import ts from 'typescript';
import { deliverEvent, sendHandshake } from 'service-webhooks/testing';

const ROOT = path.join(__dirname, '..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/**
 * A ```ts block of the README. Every one is type-checked as a user's strict project would check it.
 * An HTML comment on the line before it (blank lines between are fine) says more:
 *
 *   <!-- readme-test: run -->               also run it here (service-webhooks resolved to lib/)
 *   <!-- readme-test: file=src/app.ts -->   its file name, so another block can import it ('../src/app')
 *   <!-- readme-test: compile-only -->      the default, for blocks that need a server or a jest run
 *
 * Words combine: `<!-- readme-test: run file=src/app.ts -->`. A block without a `file` is
 * `readme-<line>.ts`, or `.mts` when it awaits at the top level (an ES module, as such code must be).
 */
interface Block {
  /** README line of the opening fence, 1-based. */
  line: number;
  heading: string;
  code: string;
  run: boolean;
  file: string;
}

const MARKER = /^<!--\s*readme-test:(.*?)-->$/;

function parseBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const found: Block[] = [];
  let heading = '(top)';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '');
    if (!line.startsWith('```')) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    const fence = line.slice(3).trim();
    if (/^(typescript|tsx?|mts|cts)$/.test(fence) && fence !== 'ts') {
      throw new Error(`README.md:${i + 1}: write \`\`\`ts, not \`\`\`${fence}, so the block is checked`);
    }
    if (fence === 'ts') {
      let above = i - 1;
      while (above >= 0 && (lines[above] as string).trim() === '') above--;
      const words = (MARKER.exec((lines[above] ?? '').trim())?.[1] ?? '').trim().split(/\s+/).filter(Boolean);
      const code = `${lines.slice(i + 1, end).join('\n')}\n`;
      let run = false;
      let file: string | undefined;
      for (const word of words) {
        if (word === 'run') run = true;
        else if (word.startsWith('file=')) file = word.slice('file='.length);
        else if (word !== 'compile-only') {
          throw new Error(
            `README.md:${above + 1}: unknown readme-test word "${word}" (run, file=…, compile-only)`,
          );
        }
      }
      const topLevelAwait = /^(?!\s|\/\/).*\bawait\b/m.test(code);
      found.push({
        line: i + 1,
        heading,
        code,
        run,
        file: file ?? `readme-${i + 1}.${topLevelAwait ? 'mts' : 'ts'}`,
      });
    }
    i = end;
  }
  return found;
}

const BLOCKS = parseBlocks(README);
const blockIn = (heading: string, nth = 0): Block => {
  const block = BLOCKS.filter((b) => b.heading === heading)[nth];
  if (block === undefined) throw new Error(`no ts block under "${heading}"`);
  return block;
};

/** Where blocks live for the compiler: a folder that does not exist, under the repository. */
const VIRTUAL = path.join(ROOT, '.tmp', 'readme');

/**
 * Type-checks blocks together, as files of one strict project with `service-webhooks` mapped to lib/
 * (the same types the built package declares). Errors are keyed by block file, with README lines.
 */
function typeErrors(blocks: readonly Block[]): Map<string, string[]> {
  const sources = new Map(blocks.map((b) => [path.join(VIRTUAL, b.file), b]));
  const host = ts.createCompilerHost({});
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => sources.get(path.resolve(name))?.code ?? readFile(name);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => sources.has(path.resolve(name)) || fileExists(name);
  // Module resolution looks for the folder first: the blocks' folders exist only here.
  const folders = new Set(
    [...sources.keys()].flatMap((file) => [path.dirname(file), path.dirname(path.dirname(file))]),
  );
  const directoryExists = host.directoryExists?.bind(host);
  host.directoryExists = (name) => folders.has(path.resolve(name)) || (directoryExists?.(name) ?? true);
  const program = ts.createProgram(
    [...sources.keys()],
    {
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      module: ts.ModuleKind.Node16,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node', 'jest'],
      baseUrl: ROOT,
      paths: { 'service-webhooks': ['lib/index.ts'], 'service-webhooks/*': ['lib/*/index.ts'] },
    },
    host,
  );
  const errors = new Map(blocks.map((b) => [b.file, [] as string[]]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const block = diagnostic.file && sources.get(path.resolve(diagnostic.file.fileName));
    // Only the README's own code: lib/ is checked by the project's typecheck, with its own settings.
    if (!block || !diagnostic.file) continue;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    errors.get(block.file)?.push(`README.md:${block.line + 1 + line}: TS${diagnostic.code} ${text}`);
  }
  return errors;
}

/** Runs `run` blocks in README order, each able to import an earlier one; returns each one's exports. */
function runBlocks(blocks: readonly Block[], expose: string[] = []): Map<string, Record<string, unknown>> {
  const done = new Map<string, Record<string, unknown>>();
  for (const block of blocks.filter((b) => b.run)) {
    // A block need not export what the test drives (`const app = express()` reads better in docs).
    const source = expose.length === 0 ? block.code : `${block.code}\nexport { ${expose.join(', ')} };\n`;
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
    });
    const module = { exports: {} as Record<string, unknown> };
    const requireFor = (name: string): unknown => {
      // jest's require, so service-webhooks resolves to lib/ and shares this test's module instances.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the block's imports, by name
      if (!name.startsWith('.')) return require(name);
      const wanted = path.posix.join(path.posix.dirname(block.file), name);
      const earlier = [...done.keys()].find((file) => file.replace(/\.m?ts$/, '') === wanted);
      if (earlier === undefined)
        throw new Error(`${block.file} imports ${name}: no earlier run block is that file`);
      return done.get(earlier);
    };
    new Function('require', 'module', 'exports', outputText)(requireFor, module, module.exports);
    done.set(block.file, module.exports);
  }
  return done;
}

describe('every ts block of the README', () => {
  let errors: Map<string, string[]>;
  beforeAll(() => {
    errors = typeErrors(BLOCKS);
  }, 120_000);

  it('is found, with its markers understood', () => {
    expect(BLOCKS.length).toBeGreaterThanOrEqual(8);
    expect(new Set(BLOCKS.map((b) => b.file)).size).toBe(BLOCKS.length);
  });

  it.each(BLOCKS.map((b) => [`${b.line}`, b.heading, b] as const))(
    'the block at line %s (%s) type-checks under strict + noUncheckedIndexedAccess + exactOptionalPropertyTypes',
    (_line, _heading, block) => {
      expect(errors.get(block.file)).toEqual([]);
    },
  );
});

describe('the type check itself', () => {
  // The two failures issue 11 found in the README, so this check is known to catch them.
  it('reports an untyped callback parameter and an optional value used as required', () => {
    const bad = parseBlocks(
      [
        '```ts',
        "import { ConsoleClient } from 'service-webhooks/console';",
        'declare const app: { post(path: string, ...handlers: unknown[]): void };',
        "app.post('/webhooks', (req, res, next) => next());",
        'declare const webhook: { privateKey?: string };',
        'const tokens: string[] = [webhook.privateKey];',
        'export { ConsoleClient, tokens };',
        '```',
      ].join('\n'),
    );
    const found = typeErrors(bad).get(bad[0]?.file ?? '') ?? [];
    expect(found.map((e) => /TS\d+/.exec(e)?.[0])).toEqual(expect.arrayContaining(['TS7006', 'TS2322']));
    expect(found[0]).toMatch(/^README\.md:4: TS7006/);
  }, 120_000);

  it('refuses a marker word it does not know, and a ```typescript fence it would skip', () => {
    expect(() => parseBlocks('<!-- readme-test: runn -->\n```ts\nx\n```')).toThrow(
      /unknown readme-test word "runn"/,
    );
    expect(() => parseBlocks('```typescript\nx\n```')).toThrow(/write ```ts/);
  });
});

describe('the README runs', () => {
  it('shows the two commands on its first screen', () => {
    const firstScreen = README.split('\n').slice(0, 20).join('\n');
    expect(firstScreen).toContain('npm install && npm run demo');
    expect(firstScreen).toContain('npm test');
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

describe('the README options examples run', () => {
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

describe('the README testing example is complete, and is what runs', () => {
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
      test.indexOf('// README:start') + '// README:start'.length,
      test.indexOf('// README:end'),
    );
    expect(body(example.code)).toBe(body(region));
  });
});
