import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.join(__dirname, '..', '..');

export interface BuiltPackage {
  /** The built bin, `dist/cli/bin.js`. */
  bin: string;
  /** For child processes: `service-webhooks` and its dependencies resolve as in a user's install. */
  env: NodeJS.ProcessEnv;
}

function sourceHash(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) hash.update(full).update(fs.readFileSync(full));
    }
  };
  walk(path.join(ROOT, 'lib'));
  // And what shapes the bundles beside the sources (the banner in tsup.config.ts, say).
  for (const file of ['package.json', 'tsup.config.ts']) hash.update(fs.readFileSync(path.join(ROOT, file)));
  return hash.digest('hex').slice(0, 16);
}

/**
 * Builds the package as `npm run build` does, into a temporary `node_modules/service-webhooks` (no
 * dist/ needed beforehand, as on a clean clone in CI), once per source version: test files share it.
 */
export async function builtPackage(): Promise<BuiltPackage> {
  // In the repository's node_modules/.cache, where build tools keep theirs: not in the temp folder,
  // where each source version would leave one behind.
  const cacheRoot = path.join(ROOT, 'node_modules', '.cache', 'service-webhooks-build');
  fs.mkdirSync(cacheRoot, { recursive: true });
  const cache = path.join(cacheRoot, sourceHash());
  const modules = path.join(cache, 'node_modules');
  const pkg = path.join(modules, 'service-webhooks');
  const bin = path.join(pkg, 'dist', 'cli', 'bin.js');
  if (!fs.existsSync(bin)) {
    const staging = fs.mkdtempSync(path.join(cacheRoot, 'staging-'));
    const outDir = path.join(staging, 'node_modules', 'service-webhooks', 'dist');
    // The bundles, as `npm run build` makes them (tsup, tsup.config.ts); declarations are not needed.
    const tsup = path.join(ROOT, 'node_modules', 'tsup', 'dist', 'cli-default.js');
    await promisify(execFile)(process.execPath, [tsup, '--out-dir', outDir, '--silent'], { cwd: ROOT }).catch(
      (error: { stdout?: string; stderr?: string }) => {
        throw new Error(`build failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
      },
    );
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(outDir, '..', 'package.json'));
    try {
      fs.renameSync(staging, cache);
    } catch {
      // Another test file built the same sources first; theirs is as good.
      fs.rmSync(staging, { recursive: true, force: true });
    }
  }
  return {
    bin,
    env: { ...process.env, NODE_PATH: [modules, path.join(ROOT, 'node_modules')].join(path.delimiter) },
  };
}
