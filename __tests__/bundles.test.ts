import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { builtPackage } from './support/built-package';

// The CommonJS bundles tsup.config.ts builds keep the syntax Node 22 runs: tsup's own conversion of
// split chunks (sucrase) turned every `?.` and `??` into a helper call allocating an array and
// closures on each use, class fields into `__init` methods, on the delivery path too (issue 36).

let bundles: { file: string; code: string }[];

beforeAll(async () => {
  const dist = path.dirname(path.dirname((await builtPackage()).bin));
  bundles = readdirSync(dist, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.js'))
    .map((file) => ({ file, code: readFileSync(path.join(dist, file), 'utf8') }));
}, 300_000);

describe('the built bundles', () => {
  it.each([
    ['_optionalChain', /\bfunction _optionalChain\(/],
    ['_asyncOptionalChain', /\bfunction _asyncOptionalChain\(/],
    ['_nullishCoalesce', /\bfunction _nullishCoalesce\(/],
    ['_asyncNullishCoalesce', /\bfunction _asyncNullishCoalesce\(/],
    ['class fields as __init methods', /\b__init\d*\(\)/],
  ])('carry no %s', (_name, pattern) => {
    expect(bundles.length).toBeGreaterThan(15);
    expect(bundles.filter(({ code }) => pattern.test(code)).map(({ file }) => file)).toEqual([]);
  });

  it('keep optional chaining and nullish coalescing as written', () => {
    const all = bundles.map(({ code }) => code).join('\n');
    expect(all.match(/\?\.[\w[(]/g)?.length ?? 0).toBeGreaterThan(100);
    expect(all.match(/ \?\? /g)?.length ?? 0).toBeGreaterThan(50);
  });
});
