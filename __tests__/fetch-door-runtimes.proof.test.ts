import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { ROWS, TOKEN } from './support/contract-rows';
import { compileLibrary } from './support/multi-instance/run-proof';
import { describeWithServer, findBinary } from './support/server-binary';

const SERVER = path.join(__dirname, 'support', 'runtimes', 'fetch-door-server.cjs');

/** The receiver contract through the Fetch door on the runtimes it names: Bun.serve and Deno.serve. */
const RUNTIMES = [
  { name: 'Bun', binary: findBinary('bun'), args: (file: string) => ['run', file], install: 'bun' },
  {
    name: 'Deno',
    binary: findBinary('deno'),
    args: (file: string) => ['run', '--allow-all', file],
    install: 'deno',
  },
];

let library: ReturnType<typeof compileLibrary> | undefined;
afterAll(() => library?.remove());

for (const runtime of RUNTIMES) {
  describeWithServer(
    runtime.binary !== undefined,
    runtime.install,
    `install it (bash scripts/bootstrap-runtimes.sh puts ${runtime.install} on PATH) or run CI=true to make this a failure`,
  )(`the receiver contract through the Fetch door on ${runtime.name}`, () => {
    let child: ChildProcess | undefined;
    let base = '';
    beforeAll(async () => {
      if (runtime.binary === undefined) throw new Error(`${runtime.install} is not installed`);
      library ??= compileLibrary();
      // Deno resolves packages only from a node_modules above the file (no NODE_PATH): give the
      // compiled library the repository's.
      const modules = path.join(library.dir, 'node_modules');
      if (!existsSync(modules)) symlinkSync(path.join(__dirname, '..', 'node_modules'), modules, 'dir');
      child = spawn(runtime.binary, runtime.args(SERVER), {
        env: { ...process.env, SW_LIB: library.dir, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const port = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${runtime.name} did not start: ${output}`)), 30_000);
        const read = (chunk: Buffer) => {
          output += chunk.toString();
          const found = /PORT (\d+)/.exec(output);
          if (found) {
            clearTimeout(timer);
            resolve(found[1] as string);
          }
        };
        child?.stdout?.on('data', read);
        child?.stderr?.on('data', read);
        child?.on('exit', (code) => reject(new Error(`${runtime.name} exited (${code}): ${output}`)));
      });
      base = `http://127.0.0.1:${port}`;
      const version = await new Promise<string>((resolve) => {
        const probe = spawn(runtime.binary as string, ['--version']);
        let text = '';
        probe.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
        probe.on('close', () => resolve(text.split('\n')[0] ?? ''));
      });
      console.log(`Fetch door contract on ${runtime.name} ${version.trim()}`);
    }, 60_000);
    afterAll(() => void child?.kill('SIGKILL'));

    it.each(ROWS)('$name → $status', async (row) => {
      const options = { bearerTokens: [TOKEN], ...row.options };
      const opened = await fetch(`${base}/__open?options=${encodeURIComponent(JSON.stringify(options))}`);
      const { id } = (await opened.json()) as { id: string };
      const { request } = row;
      const res = await fetch(`${base}/h/${id}`, {
        method: request.method ?? 'POST',
        headers: request.headers,
        body: request.method === 'GET' ? undefined : request.body,
      });
      const text = await res.text();
      const headers = Object.fromEntries(res.headers);
      expect(res.status).toBe(row.status);
      for (const [name, value] of Object.entries(row.headers ?? {})) expect(headers[name]).toMatch(value);
      const runs = Object.values(
        (await (await fetch(`${base}/__runs/${id}`)).json()) as Record<string, number>,
      );
      if (row.status === 200) {
        expect(headers['content-type']).toMatch(/^application\/json/);
        expect(JSON.parse(text)).toMatchObject({ status: row.outcome });
        expect(runs).toEqual([1]);
      } else {
        expect(headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(text)).toMatchObject({
          status: row.status,
          type: `urn:service-webhooks:problem:${row.slug}`,
        });
        expect(text).not.toMatch(/hunter2|\/srv\/|at .*\.js/);
      }
    });
  });
}
