import { Writable } from 'node:stream';
import { createOutput } from '../lib/cli/output';

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  }) as Writable & { isTTY?: boolean };
  stream.isTTY = isTTY;
  return { stream, chunks };
}

describe('CLI output', () => {
  it.each<[string, boolean, boolean, NodeJS.ProcessEnv]>([
    ['a terminal', true, true, {}],
    ['a terminal with NO_COLOR=1', false, true, { NO_COLOR: '1' }],
    ['a terminal with TERM=dumb', false, true, { TERM: 'dumb' }],
    ['a pipe', false, false, {}],
  ])('colours on %s: %p', (_name, coloured, isTTY, env) => {
    const out = sink(isTTY);
    const output = createOutput({ stdout: out.stream, stderr: sink(false).stream, env });
    output.line(output.red('failed'));
    expect(out.chunks.join('')).toBe(coloured ? '\u001b[31mfailed\u001b[39m\n' : 'failed\n');
  });
});
