import type { IncomingMessage } from 'node:http';
import { bodyProblems } from '../../core/problems';
import type { BodySource } from '../../core/webhook-request';

type NodeStream = Pick<IncomingMessage, 'on' | 'removeListener' | 'pause' | 'headers'>;

function declaredLength(stream: NodeStream): number | undefined {
  const header = stream.headers['content-length'];
  if (header === undefined) return undefined;
  const length = Number(header);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/**
 * A node:http request body, read by events rather than piped: on a limit or a timeout the stream is
 * only paused, so the answer can still be written (with `Connection: close`) instead of the socket
 * being destroyed or the rest of a 50 MB upload drained.
 */
export function nodeBody(stream: NodeStream, parsed?: { value: unknown }): BodySource {
  const length = stream.headers['content-length'];
  return {
    parsed,
    hasBody: (length !== undefined && length !== '0') || stream.headers['transfer-encoding'] !== undefined,
    read(limit, timeoutMs) {
      return new Promise<Uint8Array>((resolve, reject) => {
        const declared = declaredLength(stream);
        if (declared !== undefined && declared > limit) {
          reject(bodyProblems.tooLarge(limit));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        const cleanup = () => {
          clearTimeout(timer);
          stream.removeListener('data', onData);
          stream.removeListener('end', onEnd);
          stream.removeListener('error', onError);
          stream.removeListener('close', onAborted);
        };
        const fail = (problem: Error) => {
          cleanup();
          stream.pause();
          reject(problem);
        };
        const onData = (chunk: Buffer) => {
          size += chunk.length;
          if (size > limit) fail(bodyProblems.tooLarge(limit));
          else chunks.push(chunk);
        };
        const onEnd = () => {
          cleanup();
          if (declared !== undefined && size !== declared) reject(bodyProblems.lengthMismatch());
          else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
        };
        const onError = () => fail(bodyProblems.unreadable());
        // 'close' before 'end' is an aborted upload (node's own 'aborted' event is deprecated).
        const onAborted = () => fail(bodyProblems.aborted());
        const timer = setTimeout(() => fail(bodyProblems.timeout(timeoutMs)), timeoutMs);
        stream.on('data', onData);
        stream.on('end', onEnd);
        stream.on('error', onError);
        stream.on('close', onAborted);
      });
    },
  };
}
