import { defineConfig } from 'tsup';

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

// eslint-disable-next-line no-restricted-syntax -- tsup reads its configuration from the default export
export default defineConfig({
  entry: {
    index: 'lib/index.ts',
    'testing/index': 'lib/testing/index.ts',
    'emulator/index': 'lib/emulator/index.ts',
    'console/index': 'lib/console/index.ts',
    'metrics/index': 'lib/metrics/index.ts',
    'redis/index': 'lib/redis/index.ts',
    'postgres/index': 'lib/postgres/index.ts',
    'bullmq/index': 'lib/bullmq/index.ts',
    'pg-boss/index': 'lib/pg-boss/index.ts',
    'fastify/index': 'lib/fastify/index.ts',
    'nestjs/index': 'lib/nestjs/index.ts',
    'inbox-console/index': 'lib/inbox-console/index.ts',
    'cli/index': 'lib/cli/index.ts',
    'cli/bin': 'lib/cli/bin.ts',
    // Not a public subpath: lib/lazy-mtls.ts requires it the first time mTLS is configured.
    'mtls/index': 'lib/mtls/index.ts',
  },
  // Left a require of its own file, not bundled into the main entry (lib/lazy-mtls.ts).
  external: ['./mtls/index'],
  format: ['cjs'],
  splitting: true,
  sourcemap: true,
  target: 'node22',
  platform: 'node',
  outDir: 'dist',
  clean: false,
  dts: false,
  shims: false,
  // Classes and functions keep their names (some modules are wrapped, which would drop them).
  keepNames: true,
  banner: { js: NODE_CHECK },
});
