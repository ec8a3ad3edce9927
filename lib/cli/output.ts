/** Where and how a command writes: colours only on a terminal, and never with `NO_COLOR` set. */
export interface Output {
  line(text: string): void;
  error(text: string): void;
  json(value: unknown): void;
  red(text: string): string;
  green(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

export interface OutputStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

export function createOutput(streams: OutputStreams): Output {
  const { stdout, stderr, env } = streams;
  const colour =
    stdout.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '') && env.TERM !== 'dumb';
  const paint = (code: number, reset: number) => (text: string) =>
    colour ? `\u001b[${code}m${text}\u001b[${reset}m` : text;
  return {
    line: (text) => void stdout.write(`${text}\n`),
    error: (text) => void stderr.write(`${text}\n`),
    json: (value) => void stdout.write(`${JSON.stringify(value)}\n`),
    red: paint(31, 39),
    green: paint(32, 39),
    dim: paint(2, 22),
    bold: paint(1, 22),
  };
}
