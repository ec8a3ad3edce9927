'use strict';
// Jest runs CommonJS; pg-boss 12 and a few of its dependencies ship only ES modules. Node ≥ 22.12
// requires them natively (as the built package does), but jest's module loader needs them compiled.
const { transformSync } = require('esbuild');

module.exports = {
  process(source, filename) {
    const { code, map } = transformSync(source, {
      loader: 'js',
      format: 'cjs',
      target: 'node22',
      sourcefile: filename,
      sourcemap: 'external',
    });
    return { code, map };
  },
};
