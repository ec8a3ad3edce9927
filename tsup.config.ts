import { readFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import path from 'node:path';
import { defineConfig, type Options } from 'tsup';

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];
type TsupPlugin = NonNullable<Options['plugins']>[number];

/**
 * One bundle per entry (issue 19: a main entry that loads a handful of modules, not one per source
 * file), CommonJS for `require` and `import` alike, code the entries share in common chunks so a class
 * is one class whichever subpath it came through. Declarations come from tsc, beside them.
 */
/**
 * The first statement of every bundle: refuse a Node older than `engines` says, in one line naming
 * the version and what to do, before a missing API fails somewhere deep (pg-boss 12, `require(esm)`,
 * `Promise.withResolvers` ...). Bun and Deno report a Node version of their own; they are not Node and
 * are tested as they are. Plain ES5 so that it parses on any Node. A test runs the built bundles
 * under an older version: __tests__/node-version.test.ts.
 */
const NODE_CHECK = [
  '(function () {',
  '  var v = process.versions;',
  '  if (v.bun || v.deno) return;',
  "  var p = String(v.node).split('.').map(Number);",
  '  if (p[0] > 22 || (p[0] === 22 && p[1] >= 12)) return;',
  "  var m = '[service-webhooks] needs Node.js 22.12 or later; this is Node.js ' + v.node +",
  '    \'. Install a current Node (in a clone of service-webhooks: eval "$(bash scripts/bootstrap-runtimes.sh --node)").\';',
  // Run as a program (the CLI's bin): the one line and exit 1, as a CLI says a usage problem.
  "  if (typeof require !== 'undefined' && require.main === module) {",
  '    process.stderr.write(m + "\\n");',
  '    process.exit(1);',
  '  }',
  '  throw new Error(m);',
  '})();',
].join('\n');

const MAIN = 'lib/index.ts';
const DIST = 'dist';

const MANIFEST = JSON.parse(readFileSync('package.json', 'utf8')) as {
  exports: Record<string, string | { require: string }>;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
};

/** `./dist/x/index.js` → the bundle's name, `x/index`, built from `lib/x/index.ts`. */
function fromDist(target: string): [name: string, source: string] {
  const name = target.replace(/^\.\/dist\//, '').replace(/\.js$/, '');
  return [name, name === 'index' ? MAIN : `lib/${name}.ts`];
}

/**
 * Every public subpath of package.json's `exports` and its `bin`, read from there so the two cannot
 * drift apart; then the CLI's commands as a bundle of their own (the package proof loads it), and the
 * files of their own that a `require()` loads on first use (entryRequires).
 */
const ENTRIES: Record<string, string> = {
  ...Object.fromEntries(
    Object.values(MANIFEST.exports)
      .filter((target) => typeof target !== 'string')
      .map((target) => fromDist(target.require)),
  ),
  ...Object.fromEntries(Object.values(MANIFEST.bin).map(fromDist)),
  'cli/index': 'lib/cli/index.ts',
  'mtls/index': 'lib/mtls/index.ts',
  'cli/read-only-bullmq-inbox': 'lib/cli/read-only-bullmq-inbox.ts',
  'pg-boss/read-only-pg-boss-inbox': 'lib/pg-boss/read-only-pg-boss-inbox.ts',
  // What `trigger`, `listen` and `webhooks create` require when they run. They use event modules of
  // the receiver's chunks (normalize-event, event-rules, closest-event-name): reached from the CLI's
  // start, or from a standalone entry, a part of those chunks would be split off, one more file at the
  // main entry's cold start (__tests__/cold-start.test.ts). So they are loaded only when they run, and
  // load the main entry's code with them (sharesMain: not STANDALONE), about 15 ms of CPU.
  'cli/commands/trigger-action': 'lib/cli/commands/trigger-action.ts',
  'cli/commands/listen-action': 'lib/cli/commands/listen-action.ts',
  'cli/event-selection': 'lib/cli/event-selection.ts',
};

/**
 * A `require()` of a `lib/` file stays a `require()` of that file's own bundle (lib/lazy-mtls.ts,
 * lib/cli/open-inbox.ts), so it is loaded on first use. Bundled instead, esbuild would wrap the
 * required module, and every module it reaches (most of the receiver), in a lazy initialiser run at
 * load, a cost every entry sharing those modules paid (issue 36: cold start). The path is relative to
 * dist/ here; bundlerVisibleRequires writes it relative to the file that makes the call. A required
 * file that is no entry fails the build, naming it.
 */
const entryRequires: EsbuildPlugin = {
  name: 'entry-requires',
  setup(build) {
    const lib = path.resolve('lib');
    const entryOf = new Map(Object.entries(ENTRIES).map(([name, file]) => [path.resolve(file), name]));
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (args.kind !== 'require-call') return undefined;
      const target = path.resolve(args.resolveDir, args.path);
      if (!target.startsWith(`${lib}${path.sep}`)) return undefined;
      const entry = entryOf.get(`${target.replace(/\.ts$/, '')}.ts`);
      if (entry === undefined)
        return {
          errors: [
            {
              text: `[service-webhooks] ${path.relative('.', args.importer)} requires ${args.path}, which is no entry of tsup.config.ts: add it to ENTRIES (a file of its own), or import it`,
            },
          ],
        };
      return { path: `./${entry}`, external: true };
    });
  },
};

/** Entries meant to run without a receiver: they do not load the main entry's code (sharesMain). */
const STANDALONE = new Set(['console/index', 'emulator/index', 'cli/index', 'cli/bin']);

/**
 * Every other subpath (the test kit, the stores, the inboxes, metrics, Fastify, NestJS, the inbox
 * console) reaches the whole of the main entry's code, so that code is one chunk. esbuild puts a module
 * in the chunk of the set of entries reaching it; each subpath reaching a different part of the
 * receiver split the main entry into 15 chunks, and a file costs a cold start about as much as 10 KB
 * of code (issue 36: 20 modules, `import()` 1.8x @octokit/webhooks). The entry's module is left as it
 * is for its other importers; its entry point is a module re-exporting it beside a use of the main
 * entry's namespace (a bare import would be tree-shaken away). Such a subpath loads the receiver with
 * it, as an app using it does anyway.
 */
const sharesMain: EsbuildPlugin = {
  name: 'shares-main',
  setup(build) {
    const main = path.resolve(MAIN);
    build.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind !== 'entry-point') return undefined;
      const file = path.resolve(args.path);
      const name = Object.entries(ENTRIES).find(([, source]) => path.resolve(source) === file)?.[0];
      if (name === undefined || name === 'index' || STANDALONE.has(name)) return undefined;
      // Relative, as the maps name it: no map carries the build machine's paths.
      return { path: path.relative('.', file), namespace: 'shares-main' };
    });
    build.onLoad({ filter: /.*/, namespace: 'shares-main' }, (args) => {
      const dir = path.dirname(path.resolve(args.path));
      const relative = (file: string) => {
        const specifier = path.relative(dir, file).replace(/\.ts$/, '');
        return specifier.startsWith('.') ? specifier : `./${specifier}`;
      };
      return {
        contents: [
          `export * from ${JSON.stringify(relative(path.resolve(args.path)))};`,
          `import * as mainEntry from ${JSON.stringify(relative(main))};`,
          `if (mainEntry === undefined) throw new Error('[service-webhooks] the main entry did not load');`,
        ].join('\n'),
        resolveDir: dir,
        loader: 'ts',
      };
    });
  },
};

/**
 * Turns each chunk esbuild writes as ES module into CommonJS with sucrase's `imports` transform, as
 * tsup's own cjs-splitting step does, but leaving `?.` and `??` as they are (target node22 runs them).
 * tsup's step runs sucrase's ES transforms too (egoist/tsup#1087): every `?.` and `??` became a call of
 * `_optionalChain` / `_nullishCoalesce`, allocating an array and closures on each use, 44 in the
 * receiver's chunk, several on the delivery path (issue 36). The benches run tsc's output of lib/, so
 * only users of dist/ paid it. tsup runs this plugin before its own step, which it then skips: tsup
 * reads the context's `splitting` for nothing but that step. __tests__/bundles.test.ts fails if a
 * helper comes back (a tsup that ran its step anyway would add them again over this plugin's output).
 * sucrase is tsup's own, required from where tsup resolves it: the same version, no dependency of ours.
 */
const BUILTINS = new Set(builtinModules);
const LOADED_LATER = new Set(Object.keys(MANIFEST.dependencies));

/**
 * A `require()` the receiver makes on first use (lib/lazy-*.ts, lib/lazy-mtls.ts) reaches esbuild's
 * output as its `__require` shim, which an app's own bundler does not follow: an app bundled for a
 * deployment without node_modules would then fail on the rare path (zod explaining a bad event, a
 * `__proto__` key, an unusual Content-Type), not at start. Written back as `require()` for what every
 * receiver installs (our dependencies, node's modules, our own entry files), it is bundled with the
 * app and still loaded on first use. An optional peer's stays the shim: a bundler must not fail on a
 * peer the app never installed. Same length where the path is unchanged, so the source maps hold.
 */
function bundlerVisibleRequires(code: string, file: string, outDir: string): string {
  // The build's own out dir: a test builds into a temporary one (__tests__/support/built-package.ts).
  const dist = path.resolve(outDir);
  return code.replace(/\b__require\("([^"]+)"\)/g, (call, specifier: string) => {
    if (specifier.startsWith('.')) {
      const relative = path.relative(path.dirname(path.resolve(file)), path.join(dist, specifier));
      const target = relative.startsWith('.') ? relative : `./${relative}`;
      return target === specifier
        ? `  require(${JSON.stringify(target)})`
        : `require(${JSON.stringify(target)})`;
    }
    const name = specifier.startsWith('@')
      ? specifier.split('/').slice(0, 2).join('/')
      : specifier.split('/')[0];
    if (!BUILTINS.has(specifier.replace(/^node:/, '')) && !LOADED_LATER.has(name as string)) return call;
    return `  require(${JSON.stringify(specifier)})`;
  });
}

const nativeSyntaxCommonJs: TsupPlugin = {
  name: 'native-syntax-commonjs',
  buildStart() {
    if (this.format !== 'cjs' || this.splitting !== true)
      throw new Error(
        '[service-webhooks] native-syntax-commonjs converts split CommonJS chunks: keep format cjs with splitting in tsup.config.ts, or remove the plugin',
      );
    this.splitting = false;
  },
  renderChunk(code, info) {
    if (!/\.(js|cjs)$/.test(info.path)) return undefined;
    const tsup = createRequire(path.resolve('package.json')).resolve('tsup');
    const sucrase = createRequire(tsup)('sucrase') as typeof import('sucrase');
    const result = sucrase.transform(bundlerVisibleRequires(code, info.path, this.options.outDir), {
      filePath: info.path,
      transforms: ['imports'],
      disableESTransforms: true,
      sourceMapOptions: { compiledFilename: info.path },
    });
    return { code: result.code, map: result.sourceMap };
  },
};

// eslint-disable-next-line no-restricted-syntax -- tsup reads its configuration from the default export
export default defineConfig({
  entry: ENTRIES,
  esbuildPlugins: [entryRequires, sharesMain],
  plugins: [nativeSyntaxCommonJs],
  format: ['cjs'],
  splitting: true,
  sourcemap: true,
  target: 'node22',
  platform: 'node',
  outDir: DIST,
  clean: false,
  dts: false,
  shims: false,
  // Classes and functions keep their names (some modules are wrapped, which would drop them).
  keepNames: true,
  banner: { js: NODE_CHECK },
});
