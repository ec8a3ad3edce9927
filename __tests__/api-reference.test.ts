import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
  it('covers every public entry of package.json, and fails on any warning', () => {
    const entries = Object.keys(PACKAGE.exports)
      .filter((subpath) => subpath !== './package.json')
      .map((subpath) => (subpath === '.' ? 'lib/index.ts' : `lib/${subpath.slice(2)}/index.ts`));
    expect([...CONFIG.entryPoints].sort()).toEqual(entries.sort());
    expect(CONFIG.validation).toEqual({ notExported: true, invalidLink: true, notDocumented: true });
    expect(CONFIG.treatWarningsAsErrors).toBe(true);
    expect(PACKAGE.scripts.docs).toBe('typedoc');
  });

  it('builds with no undocumented export, no broken {@link} and no type left out', () => {
    const out = mkdtempSync(path.join(tmpdir(), 'typedoc-'));
    try {
      const run = spawnSync(
        process.execPath,
        [path.join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc'), '--out', out, '--logLevel', 'Warn'],
        { cwd: ROOT, encoding: 'utf8', timeout: 180_000 },
      );
      // eslint-disable-next-line no-control-regex -- TypeDoc colours its output
      const report = `${run.stdout}${run.stderr}`.replace(/\u001b\[[0-9;]*m/g, '').trim();
      expect({ status: run.status, report }).toEqual({ status: 0, report: '' });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 200_000);
});
