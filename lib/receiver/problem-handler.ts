import type { ErrorRequestHandler } from 'express';
import { resolveLogger, type Logger } from '../logger';
import { HttpProblem } from './http-problem';
import { sendProblem } from './send-problem';

const INTERNAL = new HttpProblem({
  status: 500,
  slug: 'internal-error',
  title: 'Internal Server Error',
  detail: 'The receiver failed while handling this delivery; the Service will retry it.',
});

export interface ProblemHandlerOptions {
  /** Where unexpected errors are logged. Defaults to the console. */
  logger?: Logger | false;
}

/** Turns every failure into problem+json; anything not built as an HttpProblem becomes a bare 500. */
export function problemHandler(options: ProblemHandlerOptions = {}): ErrorRequestHandler {
  const log = resolveLogger(options.logger, 'problemHandler');
  return function problemHandler(error: unknown, _req, res, next) {
    if (res.headersSent) return next(error);
    if (error instanceof HttpProblem) return sendProblem(res, error);
    log.error({ err: error }, 'unexpected error in the receiver; answering 500');
    sendProblem(res, INTERNAL);
  };
}
