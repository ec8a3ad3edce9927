import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** The entry as published: `npm run bench` builds dist/ first (the bench runs from .bench-build/bench). */
const OURS = path.join(__dirname, '..', '..', 'dist', 'index.js');

interface ImportCost {
  /** Wall milliseconds of the `import()`. */
  ms: number;
  /**
   * CPU milliseconds (user + system, every thread) of the same `import()`: on a machine shared with
   * other work it moves far less than the wall time, which waits for the cores.
   */
  cpuMs: number;
}

/** What one fresh node process spends in `import()` of `specifier`. */
function importCost(specifier: string): ImportCost {
  const code = `const c = process.cpuUsage(); const t = performance.now(); await import(${JSON.stringify(specifier)}); const ms = performance.now() - t; const u = process.cpuUsage(c); console.log(JSON.stringify({ ms, cpuMs: (u.user + u.system) / 1000 }));`;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' }),
  ) as ImportCost;
}

/** Modules a CommonJS `require` of our entry loads, in a fresh process. */
function modulesLoaded(): number {
  const code = `require(${JSON.stringify(OURS)}); console.log(Object.keys(require.cache).length);`;
  return Number(execFileSync(process.execPath, ['-e', code], { encoding: 'utf8' }));
}

export interface ColdStart {
  oursMs: number;
  octokitMs: number;
  oursCpuMs: number;
  octokitCpuMs: number;
  modules: number;
}

/** Import time of the main entry against @octokit/webhooks, alternating fresh processes; medians. */
export function coldStart(runs = 15): ColdStart {
  const ours: ImportCost[] = [];
  const octokit: ImportCost[] = [];
  for (let i = 0; i < runs; i++) {
    ours.push(importCost(`file://${OURS}`));
    octokit.push(importCost('@octokit/webhooks'));
  }
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
  return {
    oursMs: median(ours.map((run) => run.ms)),
    octokitMs: median(octokit.map((run) => run.ms)),
    oursCpuMs: median(ours.map((run) => run.cpuMs)),
    octokitCpuMs: median(octokit.map((run) => run.cpuMs)),
    modules: modulesLoaded(),
  };
}
