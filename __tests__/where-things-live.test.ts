import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.join(__dirname, '..');
const doc = readFileSync(path.join(ROOT, 'docs/where-things-live.md'), 'utf8');
const tree = /```\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';

function folders(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => [`${dir}/${entry.name}`, ...folders(`${dir}/${entry.name}`)]);
}

/** The tree block as paths: each name under the folder its indentation puts it in. */
function namedPaths(): string[] {
  const parents: string[] = [];
  const paths: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^( *)(\S+)((?: \S+\/)*)/.exec(line);
    if (match === null) continue;
    const depth = (match[1] as string).length / 2;
    const names = [match[2] as string, ...(match[3] as string).trim().split(' ').filter(Boolean)];
    parents.length = depth;
    for (const name of names) paths.push([...parents, name.replace(/\/$/, '')].join('/'));
    parents[depth] = (match[2] as string).replace(/\/$/, '');
  }
  return paths;
}

describe('docs/where-things-live.md matches the tree', () => {
  it('names every folder under lib/', () => {
    const named = new Set(namedPaths());
    expect(folders('lib').filter((folder) => !named.has(folder))).toEqual([]);
  });

  it('names only paths that exist', () => {
    const missing = namedPaths().filter((p) => {
      try {
        statSync(path.join(ROOT, p));
        return false;
      } catch {
        return true;
      }
    });
    expect(missing).toEqual([]);
  });
});

describe('the doors stay apart (issue 23 item 2)', () => {
  it("no door imports another door's files: they share through the core or adapters/incoming-message", () => {
    const doors = ['express', 'node', 'fetch'];
    const crossings = doors.flatMap((door) =>
      readdirSync(path.join(ROOT, 'lib/adapters', door))
        .filter((file) => file.endsWith('.ts'))
        .flatMap((file) => {
          const text = readFileSync(path.join(ROOT, 'lib/adapters', door, file), 'utf8');
          const specifiers = [...text.matchAll(/from '(\.\.\/[^']+)'/g)].map((m) => m[1] as string);
          return specifiers
            .filter((spec) => doors.some((other) => other !== door && spec.startsWith(`../${other}/`)))
            .map((spec) => `${door}/${file} imports ${spec}`);
        }),
    );
    expect(crossings).toEqual([]);
  });
});

/** One line of the doc's layer block: its folders (or root files), its place, what it may never import. */
interface Layer {
  readonly names: readonly string[];
  readonly rank: number;
  readonly never: readonly string[];
}

const layerBlock = /## Imports point down[\s\S]*?```text\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';

/** Each line: names up to the first two spaces, then a note that may start `never a/ b/:`. */
function layers(block: string): Layer[] {
  return block
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, rank) => {
      const [names = '', note = ''] = line.split(/ {2,}/);
      const never = /^never ((?:\S+\/ ?)+):/.exec(note)?.[1] ?? '';
      return { names: names.split(' '), rank, never: never.trim().split(' ').filter(Boolean) };
    });
}

/** The name that places a file (relative to lib/): the longest folder it is under, or itself, or `*.ts`. */
function placeOf(file: string, named: readonly string[]): string | undefined {
  const fits = named.filter((name) =>
    name === '*.ts' ? !file.includes('/') : name.endsWith('/') ? file.startsWith(name) : file === name,
  );
  return fits.sort((a, b) => (b === '*.ts' ? -1 : a === '*.ts' ? 1 : b.length - a.length))[0];
}

/** Every rule an import between two lib/ files (relative to lib/) breaks, as a sentence. */
function layerBreaks(
  all: readonly Layer[],
  imports: ReadonlyArray<readonly [string, string, string]>,
): string[] {
  const named = all.flatMap((layer) => layer.names);
  const layerOf = (name: string) => all.find((layer) => layer.names.includes(name)) as Layer;
  return imports.flatMap(([file, specifier, target]) => {
    const from = placeOf(file, named);
    const to = placeOf(target, named);
    const where = `lib/${file} imports '${specifier}' (lib/${target})`;
    if (from === undefined || to === undefined)
      return [`${where}: ${from === undefined ? file : target} is on no line`];
    if (from === to) return [];
    const a = layerOf(from);
    const b = layerOf(to);
    if (a.never.some((name) => to === name || to.startsWith(name)))
      return [`${where}: ${from} never imports ${to}`];
    if (b.rank < a.rank)
      return [`${where}: ${from} (line ${a.rank + 1}) imports ${to}, which is above it (line ${b.rank + 1})`];
    if (b.rank === a.rank)
      return [`${where}: ${from} imports ${to}, another folder of its own line (${a.rank + 1})`];
    return [];
  });
}

function libFiles(dir = 'lib'): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? libFiles(`${dir}/${entry.name}`)
      : entry.name.endsWith('.ts')
        ? [`${dir}/${entry.name}`.slice('lib/'.length)]
        : [],
  );
}

/** Every relative import of every file in lib/ (static, type-only, re-export and import()), resolved to its file. */
function libImports(): Array<[string, string, string]> {
  return libFiles().flatMap((file) =>
    ts
      .preProcessFile(readFileSync(path.join(ROOT, 'lib', file), 'utf8'), true, true)
      .importedFiles.map((imported) => imported.fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier): [string, string, string] => {
        const base = path.posix.join(path.posix.dirname(file), specifier);
        const target = [`${base}.ts`, `${base}/index.ts`, base].find((candidate) => {
          try {
            return statSync(path.join(ROOT, 'lib', candidate)).isFile();
          } catch {
            return false;
          }
        });
        return [file, specifier, target ?? base];
      })
      // package.json and the like: outside lib/, so on no layer
      .filter(([, , target]) => !target.startsWith('../')),
  );
}

describe('imports point down the layers docs/where-things-live.md states (issue 36)', () => {
  const stated = layers(layerBlock);

  it('states the layers, each name once, each name a path in lib/', () => {
    const names = stated.flatMap((layer) => layer.names);
    expect(stated.length).toBeGreaterThan(5);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    expect(
      names.filter((name) => name !== '*.ts' && !libFiles().some((file) => placeOf(file, [name]) === name)),
    ).toEqual([]);
  });

  it('every import in lib/ points down', () => {
    const imports = libImports();
    expect(imports.length).toBeGreaterThan(500);
    expect(layerBreaks(stated, imports)).toEqual([]);
  });

  it.each([
    [
      'core/a.ts',
      '../adapters/b',
      'adapters/b.ts',
      'core/ (line 8) imports adapters/, which is above it (line 5)',
    ],
    [
      'core/a.ts',
      '../inbox/worker/b',
      'inbox/worker/b.ts',
      'core/ (line 8) imports inbox/worker/, which is above it (line 7)',
    ],
    ['inbox/a.ts', '../core/b', 'core/b.ts', 'inbox/ (line 9) imports core/, which is above it (line 8)'],
    ['bullmq/a.ts', '../core/b', 'core/b.ts', 'bullmq/ never imports core/'],
    ['pg-boss/a.ts', '../core/dispatch/b', 'core/dispatch/b.ts', 'pg-boss/ never imports core/'],
    [
      'bullmq/a.ts',
      '../pg-boss/b',
      'pg-boss/b.ts',
      'bullmq/ imports pg-boss/, another folder of its own line (6)',
    ],
    [
      'events/a.ts',
      '../idempotency/b',
      'idempotency/b.ts',
      'events/ imports idempotency/, another folder of its own line',
    ],
    ['logger.ts', './inbox/b', 'inbox/b.ts', '*.ts (line 13) imports inbox/, which is above it (line 9)'],
    [
      'mtls/a.ts',
      '../lazy-mtls',
      'lazy-mtls.ts',
      'mtls/ (line 11) imports lazy-mtls.ts, which is above it (line 10)',
    ],
  ])('refuses %s importing %s', (file, specifier, target, rule) => {
    const [broken] = layerBreaks(stated, [[file, specifier, target]]);
    expect(broken).toContain(`lib/${file} imports '${specifier}' (lib/${target}): ${rule}`);
  });

  it.each([
    ['bullmq/a.ts', '../inbox/worker/b', 'inbox/worker/b.ts'],
    ['inbox/worker/a.ts', '../../core/dispatch/b', 'core/dispatch/b.ts'],
    ['core/a.ts', '../inbox/b', 'inbox/b.ts'],
    ['inbox/a.ts', '../logger', 'logger.ts'],
    ['core/dispatch/a.ts', './b', 'core/dispatch/b.ts'],
  ])('lets %s import %s', (file, specifier, target) => {
    expect(layerBreaks(stated, [[file, specifier, target]])).toEqual([]);
  });
});
