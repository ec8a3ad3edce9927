'use strict';
// Jest runs CommonJS; pg-boss 12, NestJS 12 and a few of their dependencies ship only ES modules.
// Node ≥ 22.12 requires them natively (as the built package does), but jest's module loader needs
// them compiled, and it has no `import()` or `import.meta` outside its experimental ESM mode: Nest
// loads its optional packages with both, so those become a require and this file's URL.
const { transformSync } = require('esbuild');

module.exports = {
  process(source, filename) {
    const nest = filename.includes('/@nestjs/');
    const { code, map } = transformSync(source, {
      loader: 'js',
      format: 'cjs',
      target: 'node22',
      sourcefile: filename,
      sourcemap: 'external',
      ...(nest && {
        supported: { 'dynamic-import': false },
        define: { 'import.meta.url': '__esm_to_cjs_url' },
        banner: "var __esm_to_cjs_url = require('node:url').pathToFileURL(__filename).href;",
      }),
    });
    return { code, map };
  },
};
