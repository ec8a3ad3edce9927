/** Thrown when a body is larger than the reader allows. */
export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`[service-webhooks] the body is over ${limit} bytes; stopped reading`);
    this.name = 'BodyTooLargeError';
  }
}

/** Thrown when a body has not all arrived within the reader's time. */
export class BodyTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`[service-webhooks] the body did not arrive within ${timeoutMs} ms; stopped reading`);
    this.name = 'BodyTimeoutError';
  }
}

/**
 * The one reader of a web stream (a fetch response's or a Fetch `Request`'s body): at most `limit`
 * bytes, and within `timeoutMs` when given, so a peer cannot make us buffer more or wait longer. Past
 * either the stream is cancelled; a stream that fails rejects with its own error.
 */
export async function readBoundedBytes(
  body: ReadableStream<Uint8Array> | null | undefined,
  limit: number,
  timeoutMs?: number,
): Promise<Uint8Array> {
  const reader = body?.getReader();
  if (reader === undefined) return new Uint8Array(0);
  // Cancelling is not awaited: a source slow to cancel must not hold the answer.
  const cancel = () => void reader.cancel().catch(() => undefined);
  let timedOut = false;
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          cancel();
        }, timeoutMs);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        cancel();
        throw new BodyTooLargeError(limit);
      }
      chunks.push(value);
    }
  } catch (error) {
    throw timedOut ? new BodyTimeoutError(timeoutMs as number) : error;
  } finally {
    clearTimeout(timer);
  }
  // A cancelled stream reads as done: the time ran out, the body did not end.
  if (timedOut) throw new BodyTimeoutError(timeoutMs as number);
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, size);
}

/** {@link readBoundedBytes} as UTF-8 text, for a fetch response's (or request's) body. */
export async function readBoundedText(
  res: Pick<Response, 'body'>,
  limit: number,
  timeoutMs?: number,
): Promise<string> {
  const bytes = await readBoundedBytes(res.body, limit, timeoutMs);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}
