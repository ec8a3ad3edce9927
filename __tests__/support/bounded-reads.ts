/**
 * The cases every bounded body reader answers alike (issue 36: one reader per stream kind): the web
 * stream reader (lib/read-bounded-text.ts), the Fetch door's body (adapters/fetch/web-body.ts), the
 * node reader (adapters/incoming-message/node-body.ts) and the emulator's routes, which use it. Each
 * reader's own test says how it answers each outcome: an error class, a problem, an emulator problem.
 */
export type BoundedOutcome = { text: string } | 'too-large' | 'timeout' | 'failed';

export interface BoundedReadCase {
  name: string;
  /** Sent at once, in order, before the reader waits. */
  chunks: readonly (string | Uint8Array)[];
  /** What follows them: the end of the body, nothing ever again, or a failure of the stream. */
  then: 'end' | 'stall' | 'fail';
  limit: number;
  /** A Content-Length header, for the readers that see headers. */
  declared?: number;
  outcome: BoundedOutcome;
}

/**
 * A stall is cut by a short timeout and a body that is all there is read within a long one, so no
 * row depends on how fast the machine is: a row that stalls never ends on its own.
 */
export const STALL_TIMEOUT_MS = 50;
export const AMPLE_TIMEOUT_MS = 30_000;

export const timeoutFor = (row: BoundedReadCase): number =>
  row.then === 'stall' ? STALL_TIMEOUT_MS : AMPLE_TIMEOUT_MS;

const bytes = (...values: number[]) => Uint8Array.from(values);

export const BOUNDED_READ_CASES: readonly BoundedReadCase[] = [
  {
    name: 'a body in pieces within the limit',
    chunks: ['ab', 'cd'],
    then: 'end',
    limit: 8,
    outcome: { text: 'abcd' },
  },
  { name: 'an empty body', chunks: [], then: 'end', limit: 8, outcome: { text: '' } },
  { name: 'a body exactly at the limit', chunks: ['abcd'], then: 'end', limit: 4, outcome: { text: 'abcd' } },
  {
    name: 'UTF-8 split inside a character',
    chunks: [bytes(0x64, 0xc3), bytes(0xa9, 0x66, 0x69)],
    then: 'end',
    limit: 16,
    outcome: { text: 'défi' },
  },
  {
    name: 'one byte past the limit, streamed',
    chunks: ['abcd', 'e'],
    then: 'end',
    limit: 4,
    outcome: 'too-large',
  },
  {
    name: 'past the limit, then stalling',
    chunks: ['abcdef'],
    then: 'stall',
    limit: 4,
    outcome: 'too-large',
  },
  { name: 'a body that stops arriving', chunks: ['ab'], then: 'stall', limit: 8, outcome: 'timeout' },
  { name: 'a body that never starts', chunks: [], then: 'stall', limit: 8, outcome: 'timeout' },
  {
    name: 'a declared length past the limit, before any byte',
    chunks: [],
    then: 'stall',
    limit: 4,
    declared: 5,
    outcome: 'too-large',
  },
  {
    name: 'a declared length within the limit',
    chunks: ['abc'],
    then: 'end',
    limit: 4,
    declared: 3,
    outcome: { text: 'abc' },
  },
  { name: 'a stream that fails mid-body', chunks: ['ab'], then: 'fail', limit: 8, outcome: 'failed' },
];
