import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

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
