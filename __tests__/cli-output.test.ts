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

  it.each<[string, boolean, NodeJS.ProcessEnv, string]>([
    ['a terminal', true, {}, '\r\u001b[2K[1/2]\r\u001b[2K[2/2]\n'],
    ['a terminal with TERM=dumb', true, { TERM: 'dumb' }, '[1/2]\n[2/2]\n'],
    ['a pipe', false, {}, '[1/2]\n[2/2]\n'],
  ])(
    'draws progress on stderr in place on %s, else as lines, never on stdout',
    (_name, isTTY, env, drawn) => {
      const out = sink(false);
      const err = sink(isTTY);
      const output = createOutput({ stdout: out.stream, stderr: err.stream, env });
      output.progress('[1/2]');
      output.progress('[2/2]');
      output.endProgress();
      output.endProgress();
      expect(err.chunks.join('')).toBe(drawn);
      expect(out.chunks).toEqual([]);
    },
  );
});
