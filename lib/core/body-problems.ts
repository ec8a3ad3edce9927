import { HttpProblem } from './http-problem';

/** The answers a body read can end in; built per failure, which is never the hot path. */
export const bodyProblems = {
  tooLarge: (limit: number) =>
    new HttpProblem({
      status: 413,
      slug: 'payload-too-large',
      title: 'Content Too Large',
      detail: `The request body exceeds the receiver's limit of ${limit} bytes.`,
      closeConnection: true,
    }),
  timeout: (timeoutMs: number) =>
    new HttpProblem({
      status: 408,
      slug: 'body-timeout',
      title: 'Request Timeout',
      detail: `The request body did not arrive within ${timeoutMs} ms.`,
      closeConnection: true,
    }),
  lengthMismatch: () =>
    new HttpProblem({
      status: 400,
      slug: 'body-length-mismatch',
      title: 'Bad Request',
      detail: 'The request body does not match its Content-Length.',
      closeConnection: true,
    }),
  aborted: () =>
    new HttpProblem({
      status: 400,
      slug: 'body-aborted',
      title: 'Bad Request',
      detail: 'The client aborted the request body.',
      closeConnection: true,
    }),
  unreadable: () =>
    new HttpProblem({
      status: 400,
      slug: 'body-unreadable',
      title: 'Bad Request',
      detail: 'The request body could not be read.',
      closeConnection: true,
    }),
};
