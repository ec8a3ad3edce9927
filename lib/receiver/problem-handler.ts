import type { ErrorRequestHandler } from 'express';
import type { ResolvedLogger } from '../logger';
import { HttpProblem } from './http-problem';
import { sendProblem } from './send-problem';

const INTERNAL = new HttpProblem({
  status: 500,
  slug: 'internal-error',
  title: 'Internal Server Error',
  detail: 'The receiver failed while handling this delivery; the Service will retry it.',
});

/** Turns every failure into problem+json; anything not built as an HttpProblem becomes a bare 500. */
export function problemHandler(log: ResolvedLogger): ErrorRequestHandler {
  return function problemHandler(error: unknown, _req, res, next) {
    if (res.headersSent) return next(error);
    if (error instanceof HttpProblem) return sendProblem(res, error);
    log.error({ err: error }, 'unexpected error in the receiver; answering 500');
    sendProblem(res, INTERNAL);
  };
}
