import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * A README with one block holding the two faults issue 11 found in the README: an untyped callback
 * parameter (TS7006, the README's line 4) and an optional value used as required (TS2322). Each
 * compiler's check is run on it, so that check is known to fail.
 */
export const FAULTY_MARKDOWN = [
  '```ts',
  "import { ConsoleClient } from 'service-webhooks/console';",
  'declare const app: { post(path: string, ...handlers: unknown[]): void };',
  "app.post('/webhooks', (req, res, next) => next());",
  'declare const webhook: { privateKey?: string };',
  'const tokens: string[] = [webhook.privateKey];',
  'export { ConsoleClient, tokens };',
  '```',
].join('\n');

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

/**
 * The compiler options of a user's strict project, as its tsconfig.json says them: the blocks are
 * checked with these by TypeScript 5.9 (typeErrors, in process) and TypeScript 7 (typeErrorsOfTsc).
 */
export const BLOCK_OPTIONS = {
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  // node20: a CommonJS app may require Nest 12's ES modules, as Node ≥ 22.12 does.
  module: 'node20',
  moduleResolution: 'node16',
  // Nest's decorators (docs/frameworks.md) are the legacy ones, with metadata.
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  target: 'es2022',
  esModuleInterop: true,
  skipLibCheck: false,
  noEmit: true,
  types: ['node', 'jest'],
  // The package's own types, from its sources (the same types the built package declares).
  paths: {
    'service-webhooks': [path.join(ROOT, 'lib', 'index.ts')],
    'service-webhooks/*': [path.join(ROOT, 'lib', '*', 'index.ts')],
  },
};

/** Where blocks live for the compiler: a folder that does not exist, under the repository. */
const VIRTUAL = path.join(ROOT, '.tmp', 'readme');

/**
 * The files other than the blocks (lib/, @types/node, ...), parsed once per test file: a second check
 * (a test's own bad block) then costs its checking, not parsing them all again. Programs share parsed
 * files as the language service's document registry does.
 */
const parsed = new Map<string, ts.SourceFile>();

/**
 * Type-checks blocks together, as files of one strict project with `service-webhooks` mapped to lib/
 * (the same types the built package declares). Errors are keyed by block file, with file and line.
 */
export function typeErrors(blocks: readonly Block[]): Map<string, string[]> {
  const sources = new Map(blocks.map((b) => [path.join(VIRTUAL, b.file), b]));
  const host = ts.createCompilerHost({});
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => sources.get(path.resolve(name))?.code ?? readFile(name);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, options, ...rest) => {
    if (sources.has(path.resolve(name))) return getSourceFile(name, options, ...rest);
    const key = `${name}\n${JSON.stringify(options)}`;
    const source = parsed.get(key) ?? getSourceFile(name, options, ...rest);
    if (source !== undefined) parsed.set(key, source);
    return source;
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => sources.has(path.resolve(name)) || fileExists(name);
  // Module resolution looks for the folder first: the blocks' folders exist only here.
  const folders = new Set(
    [...sources.keys()].flatMap((file) => [path.dirname(file), path.dirname(path.dirname(file))]),
  );
  const directoryExists = host.directoryExists?.bind(host);
  host.directoryExists = (name) => folders.has(path.resolve(name)) || (directoryExists?.(name) ?? true);
  const { options, errors: invalid } = ts.convertCompilerOptionsFromJson(BLOCK_OPTIONS, ROOT);
  if (invalid.length > 0) throw new Error(ts.formatDiagnostics(invalid, host));
  const program = ts.createProgram([...sources.keys()], options, host);
  const errors = new Map(blocks.map((b) => [b.file, [] as string[]]));
  // Only the docs' own files are checked (lib/ is the project's typecheck's, with its own settings):
  // the checker then reads of lib/ only the types the blocks use, not every file's every body.
  const diagnostics = [...sources.keys()].flatMap((file) => {
    const source = program.getSourceFile(file);
    if (source === undefined) throw new Error(`${file}: not in the program`);
    return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
  });
  for (const diagnostic of [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...diagnostics,
  ]) {
    const block = diagnostic.file && sources.get(path.resolve(diagnostic.file.fileName));
    if (!diagnostic.file) throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    if (!block) continue;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    errors.get(block.file)?.push(`${block.doc}:${block.line + 1 + line}: TS${diagnostic.code} ${text}`);
  }
  return errors;
}

/**
 * Type-checks blocks as typeErrors does, with another compiler's command line (`tsc`: TypeScript 7's,
 * which has no API in process): the blocks are written as files of a project under the repository, so
 * their imports resolve in its node_modules, with BLOCK_OPTIONS as its tsconfig.json. Errors are keyed
 * by block file, with file and line; an error outside the blocks' files (lib/, a dependency's types)
 * is the project typecheck's and the package test's, not the docs'.
 */
export function typeErrorsOfTsc(tsc: string, blocks: readonly Block[]): Map<string, string[]> {
  const parent = path.join(ROOT, '.tmp');
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(path.join(parent, 'readme-tsc-'));
  try {
    for (const block of blocks) {
      mkdirSync(path.dirname(path.join(dir, block.file)), { recursive: true });
      writeFileSync(path.join(dir, block.file), block.code);
    }
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: BLOCK_OPTIONS, files: blocks.map((b) => b.file) }, null, 2),
    );
    const run = spawnSync(process.execPath, [tsc, '-p', '.', '--pretty', 'false'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 180_000,
    });
    const output = `${run.stdout}${run.stderr}`;
    if (run.error) throw run.error;
    const byFile = new Map(blocks.map((b) => [b.file, b]));
    const errors = new Map(blocks.map((b) => [b.file, [] as string[]]));
    let found = 0;
    for (const line of output.split('\n')) {
      const error = /^(.+?)\((\d+),\d+\): error TS(\d+): (.*)$/.exec(line);
      if (error === null) {
        // An error of the project itself (an option this compiler no longer takes) checks nothing.
        if (/^error TS\d+/.test(line)) throw new Error(`${tsc}: ${line}`);
        continue;
      }
      found++;
      const [, file, at, code, text] = error as unknown as [string, string, string, string, string];
      const block = byFile.get(file.split(path.sep).join('/'));
      if (block !== undefined)
        errors.get(block.file)?.push(`${block.doc}:${block.line + Number(at)}: TS${code} ${text}`);
    }
    // A failure this reading did not understand must not pass as no error.
    if (run.status !== 0 && found === 0) throw new Error(`${tsc} exited ${run.status}:\n${output}`);
    return errors;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
