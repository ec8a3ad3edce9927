import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.join(__dirname, '..');

function sourceFiles(dir: string): string[] {
  if (!existsSync(path.join(ROOT, dir))) return [];
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const child = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(child);
    return /\.m?tsx?$/.test(entry.name) ? [child] : [];
  });
}

const parse = (file: string) =>
  ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);

/** The file a specifier names, `service-webhooks[/subpath]` as its entry; undefined for a package. */
function resolve(from: string, specifier: string): string | undefined {
  const entry = /^service-webhooks(\/[\w-]+)?$/.exec(specifier);
  if (entry !== null) return `lib${entry[1] ?? ''}/index.ts`;
  if (!specifier.startsWith('.')) return undefined;
  const target = path.posix.join(path.posix.dirname(from), specifier).replace(/\.js$/, '');
  return existsSync(path.join(ROOT, `${target}.ts`)) ? `${target}.ts` : `${target}/index.ts`;
}

interface Declared {
  file: string;
  name: string;
  /** A function, class, enum or const: something the built code carries, not a type. */
  runtime: boolean;
}

/** What each module of lib/ declares with `export` (re-exports are the entries' business). */
function declaredExports(): Declared[] {
  return sourceFiles('lib').flatMap((file) =>
    parse(file).statements.flatMap((statement): Declared[] => {
      const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
      if (!modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) return [];
      if (ts.isVariableStatement(statement))
        return statement.declarationList.declarations.flatMap((d) =>
          ts.isIdentifier(d.name) ? [{ file, name: d.name.text, runtime: true }] : [],
        );
      if (
        (ts.isFunctionDeclaration(statement) ||
          ts.isClassDeclaration(statement) ||
          ts.isEnumDeclaration(statement)) &&
        statement.name !== undefined
      )
        return [{ file, name: statement.name.text, runtime: true }];
      if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement))
        return [{ file, name: statement.name.text, runtime: false }];
      return [];
    }),
  );
}

/** `file#name` for every name imported or re-exported from a module, `file#*` for a whole module. */
function usedNames(files: readonly string[]): Set<string> {
  const used = new Set<string>();
  const record = (from: string, specifier: string, names: readonly string[] | undefined) => {
    const target = resolve(from, specifier);
    if (target === undefined) return;
    for (const name of names ?? ['*']) used.add(`${target}#${name}`);
  };
  for (const file of files) {
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        const bindings = node.importClause?.namedBindings;
        const names =
          bindings !== undefined && ts.isNamedImports(bindings)
            ? bindings.elements.map((e) => (e.propertyName ?? e.name).text)
            : undefined;
        // A default import names nothing here: lib/ has named exports only.
        if (bindings !== undefined || node.importClause === undefined)
          record(file, node.moduleSpecifier.text, names);
      } else if (
        ts.isExportDeclaration(node) &&
        node.moduleSpecifier !== undefined &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        const clause = node.exportClause;
        const names =
          clause !== undefined && ts.isNamedExports(clause)
            ? clause.elements.map((e) => (e.propertyName ?? e.name).text)
            : undefined;
        record(file, node.moduleSpecifier.text, names);
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] !== undefined &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        record(file, node.arguments[0].text, undefined);
      } else if (
        ts.isImportTypeNode(node) &&
        ts.isLiteralTypeNode(node.argument) &&
        ts.isStringLiteral(node.argument.literal)
      ) {
        record(file, node.argument.literal.text, undefined);
      }
      ts.forEachChild(node, visit);
    };
    visit(parse(file));
  }
  return used;
}

/**
 * Runtime exports no other file uses yet, each in a file another change of issue 36 has in hand this
 * wave (the worker's move, the inbox console, the issue tally, core's timeout): its owner drops the
 * `export` or uses it. An entry here that is used (or gone) fails, so the list only shrinks.
 */
const UNUSED_LEFT: Record<string, string> = {
  'lib/inbox-console/action-token.ts#TOKEN_LIFETIME_MS': 'the inbox console is being reworked',
  'lib/inbox-console/dead-letter-rows.ts#letterHref': 'the inbox console is being reworked',
  'lib/inbox-console/inbox-console.ts#writeAnswer': 'the inbox console is being reworked',
  // A compile-time check that the fast envelope reader and the zod schema agree: it is never read.
  'lib/core/event/cloud-event-envelope.ts#envelopeMatchesSchema': 'a type assertion',
};

/**
 * Names two modules of lib/ export, each left with why. A name that means two things in two places
 * misleads whoever meets the second; the same idea held twice is listed so that it stays visible.
 */
const CLASHES_LEFT: Record<string, string> = {
  // The public mTLS verifier, loaded on first use: the lazy one is the same function, not another.
  createClientCertificateVerifier: 'lib/lazy-mtls.ts wraps lib/mtls/create-client-certificate-verifier.ts',
  HandlerRun: "inbox/worker/run-queued-event.ts (the worker's) against core's public record",
  HandlerState:
    'inbox-console/newer-fields.ts reads a newer engine field; the inbox console is being reworked',
  MAX_STREAM_BUFFER: "the emulator's and the inbox console's stream bound, one idea held twice",
  writeAnswer: "adapters/incoming-message's and the inbox console's, each writing its own answer type",
};

describe('exported names (issue 36)', () => {
  const declared = declaredExports();
  const used = usedNames([
    ...sourceFiles('lib'),
    ...sourceFiles('__tests__'),
    ...sourceFiles('bench'),
    ...sourceFiles('scripts'),
    ...sourceFiles('demo-app'),
  ]);
  const isUsed = ({ file, name }: Declared) => used.has(`${file}#${name}`) || used.has(`${file}#*`);

  it('reads the exports and the imports it judges', () => {
    // Without these the checks below would pass on any tree.
    expect(declared.length).toBeGreaterThan(500);
    expect(declared).toContainEqual({
      file: 'lib/read-bounded-text.ts',
      name: 'readBoundedText',
      runtime: true,
    });
    expect(used).toContain('lib/read-bounded-text.ts#readBoundedText');
    expect(used).toContain('lib/emulator/index.ts#createEmulator');
  });

  it('every runtime value a module exports is used by another file or re-exported by an entry', () => {
    const unused = declared
      .filter((d) => d.runtime && !isUsed(d))
      .map(({ file, name }) => `${file}#${name}`)
      .filter((key) => UNUSED_LEFT[key] === undefined);
    expect(unused).toEqual([]);
  });

  it('each export left unused above is still there and still unused', () => {
    const stale = Object.keys(UNUSED_LEFT).filter(
      (key) => !declared.some((d) => `${d.file}#${d.name}` === key && !isUsed(d)),
    );
    expect(stale).toEqual([]);
  });

  it('no two modules export the same name: one name, one meaning', () => {
    const files = new Map<string, string[]>();
    for (const { file, name } of declared) files.set(name, [...(files.get(name) ?? []), file]);
    const clashes = [...files]
      .filter(([, where]) => where.length > 1)
      .map(([name, where]) => `${name}: ${where.join(', ')}`);
    expect(clashes.filter((clash) => CLASHES_LEFT[clash.split(':')[0]!] === undefined)).toEqual([]);
    expect(Object.keys(CLASHES_LEFT).filter((name) => (files.get(name) ?? []).length < 2)).toEqual([]);
  });
});
