// npm test: the type check and lint run beside the jest suite rather than before it. Most test files
// wait on servers and child processes, so a run on two cores leaves about one of them idle; the checks
// fill it. Jest's output streams as it comes; each check's is printed whole once it ends, so the lines
// never interleave. The exit code is 1 when any of the three failed. Arguments go to jest
// (`npm test -- __tests__/receiver.test.ts`).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const windows = process.platform === 'win32';

/** Runs a command to its end; resolves its exit code and, when `capture`, its output. */
function run(command, args, capture) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      // npm is npm.cmd on Windows, which Node starts only through a shell.
      shell: windows && command === 'npm',
    });
    let output = '';
    if (capture) {
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
    }
    child.on('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

const checks = [
  ['type check', run('npm', ['run', '--silent', 'typecheck'], true)],
  ['lint', run('npm', ['run', '--silent', 'lint'], true)],
];
const jest = await run(
  process.execPath,
  // The caller's arguments first: --selectProjects takes every word after it as a project's name.
  [require.resolve('jest/bin/jest'), ...process.argv.slice(2), '--selectProjects', 'suite'],
  false,
);
let failed = jest.code !== 0;
for (const [name, check] of checks) {
  const { code, output } = await check;
  if (code === 0) {
    console.log(`${name}: passed`);
    continue;
  }
  failed = true;
  console.error(`\n${name}: failed (exit ${code})\n${output}`);
}
process.exitCode = failed ? 1 : 0;
