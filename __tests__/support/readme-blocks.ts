import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');

/**
 * A ```ts block of the README or of a guide in docs/. Every one is type-checked as a user's strict
 * project would check it.
 * An HTML comment on the line before it (blank lines between are fine) says more:
 *
 *   <!-- readme-test: run -->               also run it here (service-webhooks resolved to lib/)
 *   <!-- readme-test: file=src/app.ts -->   its file name, so another block can import it ('../src/app')
 *   <!-- readme-test: compile-only -->      the default, for blocks that need a server or a jest run
 *
 * Words combine: `<!-- readme-test: run file=src/app.ts -->`. A block without a `file` is
 * `readme-<line>.ts` (`docs-<guide>-<line>.ts` in a guide), or `.mts` when it awaits at the top level
 * (an ES module, as such code must be).
 */
export interface Block {
  /** The markdown file it is in, relative to the repository: `README.md`, `docs/testing.md`. */
  doc: string;
  /** Line of the opening fence in its file, 1-based. */
  line: number;
  heading: string;
  code: string;
  run: boolean;
  file: string;
}

const MARKER = /^<!--\s*readme-test:(.*?)-->$/;

/** The README and every guide in docs/, README first: the markdown whose code blocks are checked. */
export function docFiles(): string[] {
  const guides = readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...guides];
}

/** The blocks of every file of `docFiles()`, in that order. */
export function allBlocks(): Block[] {
  return docFiles().flatMap((doc) => parseBlocks(readFileSync(path.join(ROOT, doc), 'utf8'), doc));
}

export function parseBlocks(markdown: string, doc = 'README.md'): Block[] {
  const prefix = doc === 'README.md' ? 'readme' : `docs-${path.basename(doc, '.md')}`;
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
      throw new Error(`${doc}:${i + 1}: write \`\`\`ts, not \`\`\`${fence}, so the block is checked`);
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
            `${doc}:${above + 1}: unknown readme-test word "${word}" (run, file=…, compile-only)`,
          );
        }
      }
      const topLevelAwait = /^(?!\s|\/\/).*\bawait\b/m.test(code);
      found.push({
        doc,
        line: i + 1,
        heading,
        code,
        run,
        file: file ?? `${prefix}-${i + 1}.${topLevelAwait ? 'mts' : 'ts'}`,
      });
    }
    i = end;
  }
  return found;
}

/** Where blocks live for the compiler: a folder that does not exist, under the repository. */
const VIRTUAL = path.join(ROOT, '.tmp', 'readme');

/**
 * Type-checks blocks together, as files of one strict project with `service-webhooks` mapped to lib/
 * (the same types the built package declares). Errors are keyed by block file, with file and line.
 */
export function typeErrors(blocks: readonly Block[]): Map<string, string[]> {
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
      // node20: a CommonJS app may require Nest 12's ES modules, as Node ≥ 22.12 does.
      module: ts.ModuleKind.Node20,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      // Nest's decorators (docs/frameworks.md) are the legacy ones, with metadata.
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
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
    // Only the docs' own code: lib/ is checked by the project's typecheck, with its own settings.
    if (!block || !diagnostic.file) continue;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    errors.get(block.file)?.push(`${block.doc}:${block.line + 1 + line}: TS${diagnostic.code} ${text}`);
  }
  return errors;
}

/** Runs `run` blocks in their order, each able to import an earlier one; returns each one's exports. */
export function runBlocks(
  blocks: readonly Block[],
  expose: string[] = [],
): Map<string, Record<string, unknown>> {
  const done = new Map<string, Record<string, unknown>>();
  for (const block of blocks.filter((b) => b.run)) {
    // A block need not export what the test drives (`const app = express()` reads better in docs).
    const source = expose.length === 0 ? block.code : `${block.code}\nexport { ${expose.join(', ')} };\n`;
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
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
