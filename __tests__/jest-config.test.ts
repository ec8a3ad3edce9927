import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const JEST = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
const config = createRequire(__filename)('../jest.config.js') as { projects: { displayName: string }[] };
const scripts = (
  JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

/** The test files jest runs for `npm test` or `npm run test:proofs`, as jest itself lists them. */
function listed(project: string): string[] {
  const out = execFileSync(process.execPath, [JEST, '--listTests', '--selectProjects', project], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return out
    .split('\n')
    .filter((line) => line.endsWith('.ts'))
    .map((file) => path.basename(file))
    .sort();
}

describe('npm test and npm run test:proofs', () => {
  let suite: string[];
  let proofs: string[];
  // Two jest start-ups (each reads the file tree): a bound of their own on a busy machine.
  beforeAll(() => {
    suite = listed('suite');
    proofs = listed('proofs');
  }, 120_000);

  it('select the two projects of jest.config.js', () => {
    expect(config.projects.map((p) => p.displayName)).toEqual(['suite', 'proofs']);
    // npm test runs the type check and lint beside the suite (scripts/npm-test.mjs), failing if any fails.
    expect(scripts.test).toBe('node scripts/npm-test.mjs');
    const runner = readFileSync(path.join(ROOT, 'scripts', 'npm-test.mjs'), 'utf8');
    for (const part of ["'typecheck'", "'lint'", "'--selectProjects', 'suite']", 'failed ? 1 : 0'])
      expect(runner).toContain(part);
    expect(scripts['test:proofs']).toMatch(/^jest --selectProjects proofs\b/);
  });

  it('split the test files between them, none in both, the proofs named *.proof.test.ts', () => {
    expect(suite).toContain('jest-config.test.ts');
    expect(proofs.length).toBeGreaterThanOrEqual(5);
    expect(proofs.filter((file) => !file.endsWith('.proof.test.ts'))).toEqual([]);
    expect(suite.filter((file) => proofs.includes(file))).toEqual([]);
  });

  it('are both run by CI, which sums their counts', () => {
    const ci = readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8');
    expect(ci).toMatch(/^npm test 2>&1 \| tee "\$log"$/m);
    expect(ci).toMatch(/^npm run test:proofs 2>&1 \| tee "\$logproofs"$/m);
    expect(ci).toMatch(/^passed=\$\(\(passed \+ passedproofs\)\)$/m);
  });

  it('are described in the README, which names every proof file', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf('\n## Tests\n');
    expect(start).toBeGreaterThan(-1);
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
    expect(section).toContain('npm run test:proofs');
    const named = [...section.matchAll(/`([\w.-]+\.proof\.test\.ts)`/g)].map((m) => m[1]);
    expect([...new Set(named)].sort()).toEqual(proofs);
  });
});
