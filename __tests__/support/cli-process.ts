import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import { StringDecoder } from 'node:string_decoder';

export interface CliRun {
  child: ChildProcess;
  /** Every line so far, stdout and stderr interleaved as they came. */
  lines: string[];
  stdout: string[];
  stderr: string[];
  /** Everything written so far, byte for byte (the lines above are split on a carriage return too). */
  raw: { stdout: string; stderr: string };
  /** Resolves with the first line matching `pattern`; rejects past `timeoutMs`, quoting the output. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** Ctrl-C, then the exit code (SIGKILL after 5 s). */
  interrupt(): Promise<number | null>;
}

/** Runs the built bin as a user's shell would, reading its output line by line. */
export function runCli(bin: string, args: string[], env: NodeJS.ProcessEnv): CliRun {
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const stdout: string[] = [];
  const stderr: string[] = [];
  const raw = { stdout: '', stderr: '' };
  for (const name of ['stdout', 'stderr'] as const) {
    // A character split across two chunks is decoded whole.
    const decoder = new StringDecoder('utf8');
    child[name]?.on('data', (chunk: Buffer) => (raw[name] += decoder.write(chunk)));
  }
  const waiters = new Set<() => void>();
  const follow = (stream: NodeJS.ReadableStream, into: string[]) =>
    readline.createInterface({ input: stream }).on('line', (line) => {
      into.push(line);
      lines.push(line);
      waiters.forEach((check) => check());
    });
  follow(child.stdout as NodeJS.ReadableStream, stdout);
  follow(child.stderr as NodeJS.ReadableStream, stderr);
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const waitFor = (pattern: RegExp, timeoutMs = 10_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = lines.find((line) => pattern.test(line));
        if (found === undefined) return;
        done();
        resolve(found);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no line matching ${pattern} after ${timeoutMs} ms; output:\n${lines.join('\n')}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      void exited.then(() => setTimeout(check, 0));
      check();
    });
  const interrupt = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
    const code = await exited;
    clearTimeout(kill);
    return code;
  };
  return { child, lines, stdout, stderr, raw, waitFor, exited, interrupt };
}

/**
 * `run` (to its end) and `start` (kept running, in `running` for the afterEach to interrupt), both
 * with the bin and env the test file holds at the time of the call.
 */
export function cliRunners(current: () => { bin: string; env: NodeJS.ProcessEnv }) {
  const running: CliRun[] = [];
  const start = (...args: string[]): CliRun => {
    const { bin, env } = current();
    const cli = runCli(bin, args, env);
    running.push(cli);
    return cli;
  };
  const run = async (...args: string[]) => {
    const { bin, env } = current();
    const cli = runCli(bin, args, env);
    const code = await cli.exited;
    return { code, stdout: cli.stdout, stderr: cli.stderr, lines: cli.lines };
  };
  return { run, start, running };
}
