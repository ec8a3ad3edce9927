import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');

// A proof (npm run test:proofs), not a unit test: TypeDoc builds a whole TypeScript program and the
// pages, about 16 s of CPU; the settings it builds with are checked in api-reference.test.ts.
describe('the API reference (npm run docs, TypeDoc)', () => {
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
