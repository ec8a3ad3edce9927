/** One rule a request broke, named by the field it concerns. */
export interface ProblemFieldError {
  field: string;
  rule: string;
}

export interface HttpProblemInit {
  status: number;
  /** Short slug; becomes the problem `type` as `urn:service-webhooks:problem:<slug>`. */
  slug: string;
  title: string;
  detail: string;
  field?: string;
  errors?: ProblemFieldError[];
  headers?: Record<string, string>;
  /** True when the request body was left unread, so the connection cannot be reused. */
  closeConnection?: boolean;
}

/** An RFC 9457 problem the receiver answers with; thrown or passed to `next()` by every step. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  readonly field: string | undefined;
  readonly errors: ProblemFieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly closeConnection: boolean;

  constructor(init: HttpProblemInit) {
    super(init.detail);
    this.name = 'HttpProblem';
    this.status = init.status;
    this.type = `urn:service-webhooks:problem:${init.slug}`;
    this.title = init.title;
    this.detail = init.detail;
    this.field = init.field;
    this.errors = init.errors;
    this.headers = init.headers ?? {};
    this.closeConnection = init.closeConnection ?? false;
  }

  /** The problem+json body: only what was built for the client, never a stack or a cause. */
  toJSON(): Record<string, unknown> {
    return {
      type: this.type,
      title: this.title,
      status: this.status,
      detail: this.detail,
      ...(this.field === undefined ? {} : { field: this.field }),
      ...(this.errors === undefined ? {} : { errors: this.errors }),
    };
  }
}
