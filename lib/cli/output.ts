import { escapeControl } from '../logger';

/**
 * Where and how a command writes: colours only on a terminal, and never with `NO_COLOR` set. What the
 * Service, the emulator or a receiver sent is passed through `escapeControl` (the receiver's own log
 * escaping) where a command puts it in a line: an id with a newline or an OSC sequence would otherwise
 * forge a line or retitle the terminal.
 */
export interface Output {
  line(text: string): void;
  error(text: string): void;
  json(value: unknown): void;
  /**
   * How far a long command has come, on stderr (stdout keeps only the result): redrawn in place on a
   * terminal, one plain line each otherwise. `endProgress` ends a line drawn in place.
   */
  progress(text: string): void;
  endProgress(): void;
  red(text: string): string;
  green(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

export interface OutputStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export function createOutput(streams: OutputStreams): Output {
  const { stdout, stderr, env } = streams;
  const colour =
    stdout.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '') && env.TERM !== 'dumb';
  const inPlace = stderr.isTTY === true && env.TERM !== 'dumb';
  let drawn = false;
  const paint = (code: number, reset: number) => (text: string) =>
    colour ? `\u001b[${code}m${text}\u001b[${reset}m` : text;
  return {
    line: (text) => void stdout.write(`${text}\n`),
    error: (text) => void stderr.write(`${text}\n`),
    // JSON.stringify leaves C1 controls, DEL and the bidi overrides raw; as \u escapes they are the
    // same JSON, and a terminal showing the line does not act on them.
    json: (value) => void stdout.write(`${escapeControl(JSON.stringify(value))}\n`),
    progress: (text) => {
      drawn = inPlace;
      // Carriage return and erase-line: the next state replaces this one on the terminal.
      stderr.write(inPlace ? `\r\u001b[2K${text}` : `${text}\n`);
    },
    endProgress: () => {
      if (drawn) stderr.write('\n');
      drawn = false;
    },
    red: paint(31, 39),
    green: paint(32, 39),
    dim: paint(2, 22),
    bold: paint(1, 22),
  };
}
