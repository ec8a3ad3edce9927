import type { RequestHandler } from 'express';
import { HttpProblem } from './http-problem';

const NOT_ALLOWED = new HttpProblem({
  status: 405,
  slug: 'method-not-allowed',
  title: 'Method Not Allowed',
  detail: 'The webhook receiver only accepts POST.',
  headers: { Allow: 'POST' },
  closeConnection: true,
});

/** Lets POST through and answers 405 to any other method. */
export function postOnly(): RequestHandler {
  return function postOnly(req, _res, next) {
    next(req.method === 'POST' ? undefined : NOT_ALLOWED);
  };
}
