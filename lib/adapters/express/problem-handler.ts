import type { ExpressErrorMiddleware } from './express-types';
import { checkOptionKeys } from '../../check-option-keys';
import { INTERNAL, problemAnswer } from '../../core/problems';
import { HttpProblem } from '../../core/http-problem';
import { resolveLogger, type Logger } from '../../logger';
import { sendAnswer } from './express-request';

const INTERNAL_ANSWER = problemAnswer(INTERNAL);

/** Options of {@link problemHandler}. */
export interface ProblemHandlerOptions {
  /** Where unexpected errors are logged. Defaults to the console. */
  logger?: Logger | false;
}

/**
 * Turns every failure into problem+json; anything not built as an HttpProblem becomes a bare 500.
 * It never passes an error on while it can still answer, so Express's own HTML error page (with its
 * stack trace) is never sent.
 */
export function problemHandler(options: ProblemHandlerOptions = {}): ExpressErrorMiddleware {
  checkOptionKeys(options, ['logger'], 'problemHandler');
  const log = resolveLogger(options.logger, 'problemHandler');
  return function problemHandler(error: unknown, _req, res, next) {
    if (res.headersSent) return next(error);
    if (error instanceof HttpProblem) return sendAnswer(res, problemAnswer(error));
    // The logger is contained: it cannot throw here and send us to Express's final handler.
    log.error({ err: error }, 'unexpected error in the receiver; answering 500');
    sendAnswer(res, INTERNAL_ANSWER);
  };
}
