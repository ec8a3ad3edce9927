import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { allBlocks, FAULTY_MARKDOWN, parseBlocks, typeErrorsOfTsc } from './support/readme-blocks';

const BLOCKS = allBlocks();

/**
 * The README's and the guides' blocks under TypeScript 7 (`tsc --init` there turns on
 * exactOptionalPropertyTypes), with the flags readme.test.ts checks them with under TypeScript 5.9. A
 * proof (npm run test:proofs): TypeScript 7 is installed from the npm registry, as the package test
 * installs it, being no dependency of ours.
 */
describe('every ts block of the README and of docs/*.md, under TypeScript 7', () => {
  let work: string;
  let tsc: string;
  let errors: Map<string, string[]>;
  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'sw-typescript-7-'));
    writeFileSync(path.join(work, 'package.json'), JSON.stringify({ name: 'typescript-7', private: true }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', 'typescript@7'], {
      cwd: work,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_loglevel: 'error' },
      timeout: 240_000,
    });
    tsc = path.join(work, 'node_modules', 'typescript', 'bin', 'tsc');
    errors = typeErrorsOfTsc(tsc, BLOCKS);
  }, 300_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('is TypeScript 7', () => {
    expect(execFileSync(process.execPath, [tsc, '--version'], { encoding: 'utf8' })).toMatch(/^Version 7\./);
  });

  it.each(BLOCKS.map((b) => [`${b.doc}:${b.line}`, b.heading, b] as const))(
    'the block at %s (%s) type-checks under strict + noUncheckedIndexedAccess + exactOptionalPropertyTypes + skipLibCheck false',
    (_line, _heading, block) => {
      expect(errors.get(block.file)).toEqual([]);
    },
  );

  // So the check is known to fail: the two failures issue 11 found in the README, as readme.test.ts
  // shows them under TypeScript 5.9.
  it('reports an untyped callback parameter and an optional value used as required, at their lines', () => {
    const bad = parseBlocks(FAULTY_MARKDOWN);
    const found = typeErrorsOfTsc(tsc, bad).get(bad[0]?.file ?? '') ?? [];
    expect(found.map((e) => /TS\d+/.exec(e)?.[0])).toEqual(expect.arrayContaining(['TS7006', 'TS2322']));
    expect(found[0]).toMatch(/^README\.md:4: TS7006/);
  }, 120_000);
});
