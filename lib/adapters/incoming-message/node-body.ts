import type { IncomingMessage } from 'node:http';
import { deadlineQueue, type DeadlineQueue } from '../../core/dispatch/deadline-queue';
import { bodyProblems } from '../../core/problems';
import type { BodySource } from '../../core/webhook-request';

/**
 * The reads' timeouts, one queue per `bodyTimeoutMs` (a receiver has one): a read's deadline costs no
 * Timeout object of its own. Forgotten past a few, whose pending reads keep theirs alive.
 */
const deadlines = new Map<number, DeadlineQueue>();
function readDeadlines(timeoutMs: number): DeadlineQueue {
  let queue = deadlines.get(timeoutMs);
  if (queue === undefined) {
    if (deadlines.size >= 16) deadlines.clear();
    queue = deadlineQueue(timeoutMs);
    deadlines.set(timeoutMs, queue);
  }
  return queue;
}

type NodeStream = Pick<IncomingMessage, 'on' | 'removeListener' | 'pause' | 'headers'> &
  Partial<
    Pick<IncomingMessage, 'read' | 'readableLength' | 'readableFlowing' | 'readableEncoding' | 'destroyed'>
  >;

function declaredLength(stream: NodeStream): number | undefined {
  const header = stream.headers['content-length'];
  if (header === undefined) return undefined;
  const length = Number(header);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/**
 * The whole body, when node's parser has already put all of it in the stream's buffer: a body that
 * came in the packets of its head (most deliveries) is there by the first microtask after the
 * 'request' event. One `read()` takes it, with no listener, no flowing and no deadline. Only with a
 * Content-Length and no Transfer-Encoding: a chunked body may be longer than what is buffered.
 */
function buffered(stream: NodeStream, declared: number | undefined): Buffer | undefined {
  if (
    declared === undefined ||
    stream.readableLength !== declared ||
    stream.readableFlowing === true ||
    // Someone's setEncoding would make read() return text.
    stream.readableEncoding != null ||
    stream.read === undefined ||
    stream.headers['transfer-encoding'] !== undefined
  )
    return undefined;
  return declared === 0 ? Buffer.alloc(0) : ((stream.read() as Buffer | null) ?? undefined);
}

/**
 * A node:http request body, read by events rather than piped: on a limit or a timeout the stream is
 * only paused, so the answer can still be written (with `Connection: close`) instead of the socket
 * being destroyed or the rest of a 50 MB upload drained. The read begins a microtask after it is
 * asked for, so a body already buffered is taken whole (`buffered`). `readNow` takes a body already
 * buffered at once, without a promise: a door that begins the pipeline a microtask after node's
 * 'request' event (once the parser has pushed what came with the head) has it there.
 */
export function nodeBody(stream: NodeStream, parsed?: { value: unknown }): BodySource {
  const length = stream.headers['content-length'];
  return {
    parsed,
    hasBody: (length !== undefined && length !== '0') || stream.headers['transfer-encoding'] !== undefined,
    readNow(limit) {
      const declared = declaredLength(stream);
      if (declared !== undefined && declared > limit) throw bodyProblems.tooLarge(limit);
      return buffered(stream, declared);
    },
    read(limit, timeoutMs) {
      return new Promise<Uint8Array>((resolve, reject) => {
        const declared = declaredLength(stream);
        if (declared !== undefined && declared > limit) {
          reject(bodyProblems.tooLarge(limit));
          return;
        }
        queueMicrotask(() => {
          const whole = buffered(stream, declared);
          if (whole !== undefined) resolve(whole);
          else listen(stream, declared, limit, timeoutMs, resolve, reject);
        });
      });
    },
  };
}

/** Reads the body by its events, bounded by `limit` and `timeoutMs`. */
function listen(
  stream: NodeStream,
  declared: number | undefined,
  limit: number,
  timeoutMs: number,
  resolve: (bytes: Uint8Array) => void,
  reject: (problem: Error) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  // Once the body is read its listeners stay: the request is over, and four removals (each a
  // `delete` on the emitter's table) cost more than they free. A late 'close' or 'error' finds
  // the read settled and does nothing.
  const fail = (problem: Error) => {
    if (settled) return;
    settled = true;
    cancelTimeout();
    stream.removeListener('data', onData);
    stream.removeListener('end', onEnd);
    stream.removeListener('error', onError);
    stream.removeListener('close', onAborted);
    stream.pause();
    reject(problem);
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) fail(bodyProblems.tooLarge(limit));
    else chunks.push(chunk);
  };
  const onEnd = () => {
    if (settled) return;
    settled = true;
    cancelTimeout();
    if (declared !== undefined && size !== declared) reject(bodyProblems.lengthMismatch());
    else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
  };
  // Each problem is built only when it is the outcome: node emits 'close' after every request.
  const onError = () => settled || fail(bodyProblems.unreadable());
  // 'close' before 'end' is an aborted upload (node's own 'aborted' event is deprecated).
  const onAborted = () => settled || fail(bodyProblems.aborted());
  const cancelTimeout = readDeadlines(timeoutMs).after(performance.now(), () =>
    fail(bodyProblems.timeout(timeoutMs)),
  );
  stream.on('data', onData);
  stream.on('end', onEnd);
  stream.on('error', onError);
  stream.on('close', onAborted);
  // Its 'close' may have come in the microtask before these listeners (a nextTick runs first).
  if (stream.destroyed === true) onAborted();
}
