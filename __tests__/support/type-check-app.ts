import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The TypeScript resolution modes a user's app may use (issue 19, item 3), each with the files it
 * compiles: node16 and nodenext resolve an ES module (`.mts`) and a CommonJS one (`.cts`) differently.
 */
export const RESOLUTION_MODES = {
  node10: { options: { module: 'commonjs', moduleResolution: 'node10' }, files: ['entries.ts'] },
  node16: {
    options: { module: 'node16', moduleResolution: 'node16' },
    files: ['entries.mts', 'entries.cts'],
  },
  nodenext: {
    options: { module: 'nodenext', moduleResolution: 'nodenext' },
    files: ['entries.mts', 'entries.cts'],
  },
  bundler: { options: { module: 'esnext', moduleResolution: 'bundler' }, files: ['entries.ts'] },
} as const;

export type ResolutionMode = keyof typeof RESOLUTION_MODES;

/**
 * Writes, in the app at `dir`, a module importing every one of `subpaths` (`''` for the main entry,
 * `'testing'` for `service-webhooks/testing`, ...) and one `tsconfig.<mode>.json` per resolution mode:
 * strict, exactOptionalPropertyTypes, noUncheckedIndexedAccess and skipLibCheck false, so every
 * declaration file the imports reach is checked under the strictest settings people use.
 */
export function writeEntriesApp(dir: string, subpaths: readonly string[], extra = ''): void {
  const names = subpaths.map((_, i) => `entry${i}`);
  const source = [
    ...subpaths.map((s, i) => `import * as ${names[i]} from 'service-webhooks${s === '' ? '' : `/${s}`}';`),
    extra,
    `export const entries = [${names.join(', ')}];`,
    '',
  ].join('\n');
  for (const file of ['entries.ts', 'entries.mts', 'entries.cts'])
    writeFileSync(path.join(dir, file), source);
  for (const [mode, { options, files }] of Object.entries(RESOLUTION_MODES)) {
    const compilerOptions = {
      ...options,
      target: 'es2022',
      // The strictest settings people use: TypeScript 7's `tsc --init` turns on the first two.
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      noEmit: true,
      skipLibCheck: false,
      // As `tsc --init` writes it: zod's own declarations need it under skipLibCheck false.
      esModuleInterop: true,
      types: ['node'],
    };
    writeFileSync(path.join(dir, `tsconfig.${mode}.json`), JSON.stringify({ compilerOptions, files }));
  }
}

/** Runs `tsc` (a path to its bin) on the app's tsconfig for `mode`; returns its error lines, none when clean. */
export function typeErrors(tsc: string, dir: string, mode: ResolutionMode): string[] {
  try {
    execFileSync('node', [tsc, '-p', `tsconfig.${mode}.json`], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return [];
  } catch (error) {
    const output = String((error as { stdout?: string }).stdout ?? error);
    const lines = output.split('\n').filter((line) => line.includes('error TS'));
    return lines.length > 0 ? lines : [output];
  }
}
