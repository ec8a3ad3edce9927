import { bodyProblems } from '../../core/problems';
import { HttpProblem } from '../../core/http-problem';
import type { BodySource } from '../../core/webhook-request';

/** A Fetch `Request` body, read chunk by chunk so a limit or a timeout cancels it early. */
export function webBody(request: Request): BodySource {
  return {
    hasBody: request.body !== null,
    async read(limit, timeoutMs) {
      const header = request.headers.get('content-length');
      const declared = header === null ? undefined : Number(header);
      if (declared !== undefined && Number.isSafeInteger(declared) && declared > limit) {
        throw bodyProblems.tooLarge(limit);
      }
      if (request.bodyUsed) {
        throw new HttpProblem({
          status: 400,
          slug: 'body-consumed',
          title: 'Bad Request',
          detail:
            'The request body was already read before the receiver; route the request to it before anything reads the body.',
        });
      }
      const reader = request.body?.getReader();
      if (reader === undefined) return new Uint8Array(0);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        reader.cancel().catch(() => undefined);
      }, timeoutMs);
      const chunks: Uint8Array[] = [];
      let size = 0;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          size += value.byteLength;
          if (size > limit) {
            reader.cancel().catch(() => undefined);
            throw bodyProblems.tooLarge(limit);
          }
          chunks.push(value);
        }
      } catch (error) {
        if (timedOut) throw bodyProblems.timeout(timeoutMs);
        throw error instanceof Error && error.name === 'HttpProblem' ? error : bodyProblems.unreadable();
      } finally {
        clearTimeout(timer);
      }
      if (timedOut) throw bodyProblems.timeout(timeoutMs);
      return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, size);
    },
  };
}
