/** Thrown when a response body is larger than the reader allows. */
export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`[service-webhooks] the response body is over ${limit} bytes; stopped reading`);
    this.name = 'BodyTooLargeError';
  }
}

/**
 * Reads a fetch response's (or request's) body as UTF-8, at most `limit` bytes: a peer cannot make us
 * buffer more.
 */
export async function readBoundedText(res: Pick<Response, 'body'>, limit: number): Promise<string> {
  const reader = res.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new BodyTooLargeError(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
