import { defineConfig } from 'tsup';

/**
 * One bundle per entry (issue 19: a main entry that loads a handful of modules, not one per source
 * file), CommonJS for `require` and `import` alike, code the entries share in common chunks so a class
 * is one class whichever subpath it came through. Declarations come from tsc, beside them.
 */
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
});
