import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { builtPackage, type BuiltPackage } from './support/built-package';

/**
 * The built bundles refuse a Node older than `engines` (issue 29 item 5), in one line naming the version
 * and the bootstrap. The version is made to read older through a preload, so the test runs on any Node;
 * a system Node that really is older is tried too.
 */
describe('an older Node is refused when the package loads', () => {
  let built: BuiltPackage;
  let dir: string;
  const preload = (version: string) => {
    const file = path.join(dir, `as-${version}.cjs`);
    writeFileSync(
      file,
      `Object.defineProperty(process.versions, 'node', { value: ${JSON.stringify(version)} });\n`,
    );
    return file;
  };
  const node = (version: string, args: string[]) =>
    spawnSync(process.execPath, ['--require', preload(version), ...args], {
      // Not the repository, where `service-webhooks` would resolve to its own dist/ by self-reference.
      cwd: dir,
      env: built.env,
      encoding: 'utf8',
      timeout: 60_000,
    });
  const message = (version: string) =>
    `[service-webhooks] needs Node.js 22.12 or later; this is Node.js ${version}. Install a current Node (in a clone of service-webhooks: eval "$(bash scripts/bootstrap-runtimes.sh --node)").`;

  beforeAll(async () => {
    built = await builtPackage();
    dir = mkdtempSync(path.join(os.tmpdir(), 'sw-node-version-'));
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const ENTRIES = ['service-webhooks', 'service-webhooks/testing', 'service-webhooks/bullmq'];

  it.each(['20.19.0', '22.11.0', '18.20.8'])(
    'Node %s: require() and import throw the one line',
    (version) => {
      for (const entry of ENTRIES) {
        const required = node(version, ['-e', `require(${JSON.stringify(entry)})`]);
        expect({ entry, status: required.status }).toEqual({ entry, status: 1 });
        expect(required.stderr).toContain(`Error: ${message(version)}\n`);
      }
      const imported = node(version, [
        '--input-type=module',
        '-e',
        // ES modules do not search NODE_PATH: the built main entry by its URL.
        `await import(${JSON.stringify(pathToFileURL(path.resolve(built.bin, '..', '..', 'index.js')).href)})`,
      ]);
      expect(imported.status).toBe(1);
      expect(imported.stderr).toContain(message(version));
    },
  );

  it.each(['22.12.0', '23.0.0', '24.21.0', '30.1.2'])('Node %s: loads', (version) => {
    for (const entry of ENTRIES) {
      const required = node(version, ['-e', `require(${JSON.stringify(entry)}); console.log('loaded')`]);
      expect({ entry, status: required.status, out: required.stdout }).toEqual({
        entry,
        status: 0,
        out: 'loaded\n',
      });
    }
  });

  it('the CLI says the one line and nothing else, exit 1', () => {
    const run = node('20.19.0', [built.bin, '--help']);
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
      status: 1,
      stdout: '',
      stderr: `${message('20.19.0')}\n`,
    });
  });

  // The machines this runs on come with an older system Node (the reason for the bootstrap).
  const system = ['/usr/bin/node', '/usr/local/bin/node'].find((file) => {
    try {
      const [major, minor] = execFileSync(file, ['-p', 'process.versions.node'], { encoding: 'utf8' })
        .trim()
        .split('.')
        .map(Number);
      return (major ?? 0) < 22 || (major === 22 && (minor ?? 0) < 12);
    } catch {
      return false;
    }
  });
  (system === undefined ? it.skip : it)(`a real older Node (${system ?? 'none found'}) is refused`, () => {
    const run = spawnSync(system as string, [built.bin, '--version'], {
      cwd: dir,
      env: built.env,
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /^\[service-webhooks\] needs Node\.js 22\.12 or later; this is Node\.js \d+\.\d+\.\d+\. /,
    );
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
