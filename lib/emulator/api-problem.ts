import type { ServerResponse } from 'node:http';

export interface ApiProblemInit {
  status: number;
  /** Becomes the problem `type` as `urn:service-webhooks:problem:<slug>`. */
  slug: string;
  title: string;
  detail: string;
  field?: string;
  errors?: { field: string; rule: string }[];
  /** Headers sent with it (`Retry-After`). */
  headers?: Record<string, string>;
}

/**
 * An RFC 9457 problem the emulator's own APIs answer with. Kept apart from the receiver's: the
 * emulator plays the Service, whose error bodies the spec does not show.
 */
export class ApiProblem extends Error {
  constructor(readonly init: ApiProblemInit) {
    super(init.detail);
    this.name = 'ApiProblem';
  }

  get status(): number {
    return this.init.status;
  }
}

/** Writes a problem as `application/problem+json`; a no-op once a response has started. */
export function sendApiProblem(res: ServerResponse, problem: ApiProblem): void {
  if (res.headersSent) return;
  const { slug, errors, headers, ...rest } = problem.init;
  const body = JSON.stringify({
    type: `urn:service-webhooks:problem:${slug}`,
    ...rest,
    ...(errors ? { errors: errors.slice(0, 20) } : {}),
  });
  res.writeHead(rest.status, {
    ...headers,
    'Cache-Control': 'no-store',
    'Content-Type': 'application/problem+json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}
