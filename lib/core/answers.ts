import type { HttpProblem } from './http-problem';
import type { Answer } from './webhook-request';

const JSON_TYPE = 'application/json; charset=utf-8';

/** A problem as problem+json; the body holds only what was built for the client. */
export function problemAnswer(problem: HttpProblem): Answer {
  const headers: Record<string, string> = { ...problem.headers };
  // An unread body would otherwise be drained byte by byte to keep the socket alive.
  if (problem.closeConnection) headers.Connection = 'close';
  headers['Cache-Control'] = 'no-store';
  headers['Content-Type'] = 'application/problem+json; charset=utf-8';
  return { status: problem.status, headers, body: JSON.stringify(problem.toJSON()) };
}

/** The acknowledgement of an event: 200 with its id, type and what became of it. */
export function eventAnswer(
  id: string,
  type: string,
  status: 'processed' | 'unhandled' | 'duplicate' | 'stale' | 'queued',
): Answer {
  return {
    status: 200,
    headers: { 'Content-Type': JSON_TYPE },
    body: `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"status":"${status}"}`,
  };
}
