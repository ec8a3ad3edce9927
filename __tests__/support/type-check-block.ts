import path from 'node:path';
import ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');

/**
 * Type-checks a README block as a user's strict project would, `service-webhooks` and its subpaths
 * mapped to lib/. Returns the diagnostics' messages.
 */
export function typeErrorsOfBlock(source: string): string[] {
  const file = path.join(ROOT, '.tmp', 'readme-block.ts');
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
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}
