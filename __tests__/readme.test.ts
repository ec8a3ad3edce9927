import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import ts from 'typescript';
import * as library from '../lib';
import { deliverEvent, sendHandshake } from '../lib/testing';

const README = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');

/** The first ```ts block after a heading, as written in the README. */
function codeAfter(heading: string): string {
  const section = README.slice(README.indexOf(`\n${heading}\n`));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (!match?.[1]) throw new Error(`no ts block after ${heading}`);
  return match[1];
}

/** Compiles a README block and runs it with `service-webhooks` resolved to this repository. */
function runBlock(source: string, exported: string[]): Record<string, unknown> {
  const { outputText } = ts.transpileModule(`${source}\nexport { ${exported.join(', ')} };`, {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
  });
  const module = { exports: {} as Record<string, unknown> };
  const requireFromHere = createRequire(__filename);
  const requireFor = (name: string) => (name === 'service-webhooks' ? library : requireFromHere(name));
  new Function('require', 'module', 'exports', outputText)(requireFor, module, module.exports);
  return module.exports;
}

/** Type-checks a README block as a user's strict project would, `service-webhooks` mapped to lib/. */
function typeErrors(source: string): string[] {
  const root = path.join(__dirname, '..');
  const file = path.join(root, '.tmp', 'readme-block.ts');
  const host = ts.createCompilerHost({});
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => (path.resolve(name) === file ? source : readFile(name));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => path.resolve(name) === file || fileExists(name);
  const program = ts.createProgram(
    [file],
    {
      strict: true,
      noUncheckedIndexedAccess: true,
      module: ts.ModuleKind.Node16,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
      baseUrl: root,
      paths: { 'service-webhooks': ['lib/index.ts'] },
    },
    host,
  );
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('README', () => {
  it('has a quick start that type-checks under strict settings', () => {
    expect(typeErrors(codeAfter('## Quick start'))).toEqual([]);
  });

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
      const { app } = runBlock(codeAfter('## Quick start'), ['app']) as { app: import('express').Express };
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
});

describe('README testing example', () => {
  it('is the test that runs in __tests__/testing.test.ts', () => {
    const body = (text: string) =>
      text
        .split('\n')
        .filter((line) => !line.startsWith('import ') && line.trim() !== '')
        .map((line) => line.trim())
        .join('\n');
    const test = readFileSync(path.join(__dirname, 'testing.test.ts'), 'utf8');
    const region = test.slice(
      test.indexOf('// README:start') + '// README:start'.length,
      test.indexOf('// README:end'),
    );
    expect(body(codeAfter('## Testing your receiver'))).toBe(body(region));
  });
});
