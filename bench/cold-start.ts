import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** The entry as published: `npm run bench` builds dist/ first (the bench runs from .bench-build/bench). */
const OURS = path.join(__dirname, '..', '..', 'dist', 'index.js');

/** Milliseconds one fresh node process spends in `import()` of `specifier`. */
function importMs(specifier: string): number {
  const code = `const t = performance.now(); await import(${JSON.stringify(specifier)}); console.log(performance.now() - t);`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' }));
}

/** Modules a CommonJS `require` of our entry loads, in a fresh process. */
function modulesLoaded(): number {
  const code = `require(${JSON.stringify(OURS)}); console.log(Object.keys(require.cache).length);`;
  return Number(execFileSync(process.execPath, ['-e', code], { encoding: 'utf8' }));
}

export interface ColdStart {
  oursMs: number;
  octokitMs: number;
  modules: number;
}

/** Import time of the main entry against @octokit/webhooks, alternating fresh processes; medians. */
export function coldStart(runs = 15): ColdStart {
  const ours: number[] = [];
  const octokit: number[] = [];
  for (let i = 0; i < runs; i++) {
    ours.push(importMs(`file://${OURS}`));
    octokit.push(importMs('@octokit/webhooks'));
  }
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
  return { oursMs: median(ours), octokitMs: median(octokit), modules: modulesLoaded() };
}
