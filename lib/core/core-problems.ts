import { HttpProblem } from './http-problem';

/** Built once: the answers for a method other than POST, and for a failure of the receiver itself. */
export const NOT_ALLOWED = new HttpProblem({
  status: 405,
  slug: 'method-not-allowed',
  title: 'Method Not Allowed',
  detail: 'The webhook receiver only accepts POST.',
  headers: { Allow: 'POST' },
  closeConnection: true,
});

export const INTERNAL = new HttpProblem({
  status: 500,
  slug: 'internal-error',
  title: 'Internal Server Error',
  detail: 'The receiver failed while handling this delivery; the Service will retry it.',
});
