/** The console API answered with an error status. */
export class ConsoleApiError extends Error {
  /** The HTTP status the API answered (a 3xx too: redirects are never followed). */
  readonly status: number;
  /** The parsed body (problem+json or whatever the API sent), or its text. */
  readonly body: unknown;
  /** The request's method: `GET`, `POST`, `DELETE`. */
  readonly method: string;
  /** The request's path, below `baseUrl`. */
  readonly path: string;

  constructor(method: string, path: string, status: number, body: unknown, explanation?: string) {
    const detail = explanation ?? (body as { detail?: unknown } | null)?.detail;
    super(
      `[service-webhooks] console ${method} ${path} answered ${status}${typeof detail === 'string' ? `: ${detail}` : ''}`,
    );
    this.name = 'ConsoleApiError';
    this.status = status;
    this.body = body;
    this.method = method;
    this.path = path;
  }
}

/** The request never got an answer: a refused connection, a DNS failure, a timeout. */
export class ConsoleNetworkError extends Error {
  /** The request's method: `GET`, `POST`, `DELETE`. */
  readonly method: string;
  /** The request's path, below `baseUrl`. */
  readonly path: string;

  constructor(method: string, path: string, reason: string, cause: unknown) {
    super(`[service-webhooks] console ${method} ${path} failed: ${reason}; check baseUrl and the network`, {
      cause,
    });
    this.name = 'ConsoleNetworkError';
    this.method = method;
    this.path = path;
  }
}

/** A call's arguments break a rule of the console API; raised before any request is sent. */
export class ConsoleValidationError extends TypeError {
  /** The argument that breaks the rule: `url`, `subscribedEvents`, `id`, … */
  readonly field: string;

  constructor(method: string, field: string, rule: string) {
    super(`[service-webhooks] ConsoleClient.${method}: ${field} ${rule}`);
    this.name = 'ConsoleValidationError';
    this.field = field;
  }
}
