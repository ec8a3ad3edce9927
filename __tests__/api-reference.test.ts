import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const CONFIG = JSON.parse(readFileSync(path.join(ROOT, 'typedoc.json'), 'utf8')) as {
  entryPoints: string[];
  validation: Record<string, boolean>;
  treatWarningsAsErrors: boolean;
};
const PACKAGE = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>;
  scripts: Record<string, string>;
};

describe('the API reference (npm run docs, TypeDoc)', () => {
  // Its build (TypeDoc, a whole TypeScript program and the pages: about 16 s of CPU) is a proof,
  // api-reference.proof.test.ts, run by npm run test:proofs.
  it('covers every public entry of package.json, and fails on any warning', () => {
    const entries = Object.keys(PACKAGE.exports)
      .filter((subpath) => subpath !== './package.json')
      .map((subpath) => (subpath === '.' ? 'lib/index.ts' : `lib/${subpath.slice(2)}/index.ts`));
    expect([...CONFIG.entryPoints].sort()).toEqual(entries.sort());
    expect(CONFIG.validation).toEqual({ notExported: true, invalidLink: true, notDocumented: true });
    expect(CONFIG.treatWarningsAsErrors).toBe(true);
    expect(PACKAGE.scripts.docs).toBe('typedoc');
  });
});
