import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.join(__dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const child = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(child);
    return entry.name.endsWith('.ts') ? [child] : [];
  });
}

/**
 * Every relative import of each file under lib/, type-only ones and `export … from` included: a type
 * import back up is still two files that must know each other, and the next value import along it
 * makes a load-order circle. Dynamic `import()` counts too, for the same reason.
 */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles('lib')) {
    const { importedFiles } = ts.preProcessFile(readFileSync(path.join(ROOT, file), 'utf8'), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => {
        const target = path.posix.join(path.posix.dirname(file), specifier).replace(/\.js$/, '');
        if (target.endsWith('.json')) return target;
        return existsSync(path.join(ROOT, `${target}.ts`)) ? `${target}.ts` : `${target}/index.ts`;
      });
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/**
 * One circle per knot (a strongly connected group of files): the files along a shortest one, first
 * file again at the end, and every file of the knot, which other circles may run through.
 */
function cycles(graph: ReadonlyMap<string, readonly string[]>): { circle: string[]; knot: string[] }[] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  // Tarjan's strongly connected components; lib/ is a few hundred files, so recursion depth is fine.
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    for (;;) {
      const member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
      if (member === file) break;
    }
    if (group.length > 1 || (graph.get(file) ?? []).includes(file)) groups.push(group);
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return groups.map((group) => ({ circle: shortestCircle(graph, new Set(group)), knot: group.sort() }));
}

/** A shortest path from the group's first file (by name) back to itself, inside the group. */
function shortestCircle(graph: ReadonlyMap<string, readonly string[]>, group: ReadonlySet<string>): string[] {
  const start = [...group].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let at = 0; at < queue.length; at++) {
    const file = queue[at]!;
    for (const target of graph.get(file) ?? []) {
      if (!group.has(target)) continue;
      if (target === start) {
        const circle = [start];
        for (let back = file; back !== start; back = cameFrom.get(back)!) circle.splice(1, 0, back);
        return [...circle, start];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, file);
        queue.push(target);
      }
    }
  }
  return [...group];
}

describe('the circle finder', () => {
  it.each<[string, Record<string, string[]>, string[][]]>([
    ['a line', { a: ['b'], b: ['c'], c: [] }, []],
    ['a pair', { a: ['b'], b: ['a'] }, [['a', 'b', 'a']]],
    ['a file importing itself', { a: ['a'] }, [['a', 'a']]],
    ['a long circle with a shortcut', { a: ['b'], b: ['c', 'a'], c: ['a'] }, [['a', 'b', 'a']]],
    [
      'two circles apart',
      { a: ['b'], b: ['a'], c: ['d'], d: ['e'], e: ['c'] },
      [
        ['a', 'b', 'a'],
        ['c', 'd', 'e', 'c'],
      ],
    ],
    ['a diamond', { a: ['b', 'c'], b: ['d'], c: ['d'], d: [] }, []],
  ])('finds in %s exactly its circles', (_name, edges, expected) => {
    const found = cycles(new Map(Object.entries(edges))).map(({ circle }) => circle);
    expect(found.sort((x, y) => x[0]!.localeCompare(y[0]!))).toEqual(expected);
  });
});

describe('lib/ has no import circles (issue 36)', () => {
  const graph = importGraph();

  it('reads the imports of every file, type-only ones included', () => {
    // If the reader saw nothing, the next test would pass on any tree.
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get('lib/emulator/emulator-state.ts')).toContain('lib/emulator/emulator-types.ts');
    const unresolved = [...graph.values()].flat().filter((target) => !existsSync(path.join(ROOT, target)));
    expect(unresolved).toEqual([]);
  });

  it('no file reaches itself through its imports: types go in a leaf file, behaviour is passed in', () => {
    const named = cycles(graph).map(({ circle, knot }) =>
      knot.length + 1 > circle.length
        ? `${circle.join(' → ')} (one of the circles through ${knot.join(', ')})`
        : circle.join(' → '),
    );
    expect(named).toEqual([]);
  });
});
