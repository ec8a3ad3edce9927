import type { Response } from 'express';
import { HttpProblem } from './http-problem';

/** Writes a problem as `application/problem+json`; a no-op once a response has started. */
export function sendProblem(res: Response, problem: HttpProblem): void {
  if (res.headersSent) return;
  res.status(problem.status);
  for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  // An unread body would otherwise be drained byte by byte to keep the socket alive.
  if (problem.closeConnection) res.setHeader('Connection', 'close');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
  res.end(JSON.stringify(problem.toJSON()));
}
