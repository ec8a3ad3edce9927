import { bodyProblems } from '../../core/problems';
import { HttpProblem } from '../../core/http-problem';
import type { BodySource } from '../../core/webhook-request';
import { BodyTimeoutError, BodyTooLargeError, readBoundedBytes } from '../../read-bounded-text';

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
      try {
        return await readBoundedBytes(request.body, limit, timeoutMs);
      } catch (error) {
        if (error instanceof BodyTooLargeError) throw bodyProblems.tooLarge(limit);
        if (error instanceof BodyTimeoutError) throw bodyProblems.timeout(timeoutMs);
        throw bodyProblems.unreadable();
      }
    },
  };
}
