import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { postgresSetupSql } from 'service-webhooks/postgres';

const ROOT = path.join(__dirname, '..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const start = README.indexOf('\n## Running more than one instance\n');
const section = README.slice(start, README.indexOf('\n## ', start + 1));
const blocks = (lang: string) =>
  [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1] ?? '');

/** Type-checks a block as a user's strict project would, the package's subpaths mapped to lib/. */
function typeErrors(source: string): string[] {
  const file = path.join(ROOT, '.tmp', 'readme-stores-block.ts');
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
      baseUrl: ROOT,
      paths: { 'service-webhooks': ['lib/index.ts'], 'service-webhooks/*': ['lib/*/index.ts'] },
    },
    host,
  );
  // The block's own errors; the library's are the type check's business.
  return ts
    .getPreEmitDiagnostics(program, program.getSourceFile(file))
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('README "Running more than one instance"', () => {
  it('sits right after "Delivery guarantees"', () => {
    const headings = [...README.matchAll(/^## (.*)$/gm)].map((m) => m[1]);
    expect(headings[headings.indexOf('Delivery guarantees') + 1]).toBe('Running more than one instance');
  });

  it('has TypeScript blocks that type-check under strict settings', () => {
    const sources = blocks('ts');
    expect(sources.length).toBeGreaterThanOrEqual(3);
    expect(sources.map(typeErrors)).toEqual(sources.map(() => []));
  }, 60_000);

  it('shows the SQL that setup() runs', () => {
    expect(blocks('sql')).toEqual([`${postgresSetupSql()}\n`]);
  });
});
