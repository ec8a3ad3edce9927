import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { builtPackage, type BuiltPackage } from './support/built-package';

let built: BuiltPackage;
const dirs: string[] = [];

beforeAll(async () => {
  built = await builtPackage();
}, 180_000);

afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/**
 * Runs the real bin with its stdout a pipe whose reader has already gone, as after `| head -1`, with
 * no race: a FIFO opened by this shell for reading and writing, then for writing, then the reading end
 * closed, so the bin's first write fails with EPIPE whatever the timing.
 */
function intoClosedPipe(...args: string[]) {
  const dir = mkdtempSync(path.join(tmpdir(), 'sw-closed-pipe-'));
  dirs.push(dir);
  const script = 'mkfifo "$0" && exec 3<>"$0" 4>"$0" 3>&- && exec "$@" >&4 4>&-';
  const result = spawnSync(
    'bash',
    ['-c', script, path.join(dir, 'out'), process.execPath, built.bin, ...args],
    { env: built.env, encoding: 'utf8', timeout: 20_000 },
  );
  return { code: result.status, signal: result.signal, stderr: result.stderr };
}

describe('the CLI with its output closed early (`service-webhooks --help | head -1`)', () => {
  it.each([[['--help']], [['trigger', '--help']], [['--version']]])(
    '%j exits 0 quietly, without an EPIPE stack trace',
    (args) => {
      expect(intoClosedPipe(...args)).toEqual({ code: 0, signal: null, stderr: '' });
    },
  );

  it('keeps the exit code of a usage error whose usage could not be read (no command: exit 2)', () => {
    expect(intoClosedPipe()).toEqual({ code: 2, signal: null, stderr: '' });
  });
});
