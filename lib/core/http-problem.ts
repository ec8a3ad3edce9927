import { MAX_FIELD_ERRORS, type FieldError as ProblemFieldError } from '../events/invalid-event-error';

export type { FieldError as ProblemFieldError } from '../events/invalid-event-error';

/** What an {@link HttpProblem} is built from. */
export interface HttpProblemInit {
  /** The HTTP status to answer. */
  status: number;
  /** Short slug; becomes the problem `type` as `urn:service-webhooks:problem:<slug>`. */
  slug: string;
  /** A short summary, the same for every problem of this slug. */
  title: string;
  /** What went wrong with this request, and what to do; never a token or a secret. */
  detail: string;
  /** The field of the request the problem concerns, when there is one. */
  field?: string | undefined;
  /** Kept to the first 20; `errorCount` tells how many there were. */
  errors?: ProblemFieldError[] | undefined;
  /** How many errors there were in all, when more than `errors` keeps. */
  errorCount?: number | undefined;
  /** Headers to answer with (`Retry-After`, `WWW-Authenticate`, `Allow`). Defaults to none. */
  headers?: Record<string, string>;
  /** True when the request body was left unread, so the connection cannot be reused. Defaults to `false`. */
  closeConnection?: boolean;
}

/** An RFC 9457 problem the receiver answers with; thrown or passed to `next()` by every step. */
export class HttpProblem extends Error {
  /** The HTTP status answered. */
  readonly status: number;
  /** The short name of the problem: `invalid-token`, `payload-too-large`, … */
  readonly slug: string;
  /** The problem type URI, `urn:service-webhooks:problem:<slug>`. */
  readonly type: string;
  /** A short summary, the same for every problem of this slug. */
  readonly title: string;
  /** What went wrong with this request, and what to do. */
  readonly detail: string;
  /** The field of the request the problem concerns, if any. */
  readonly field: string | undefined;
  /** The rules the request broke, at most 20. */
  readonly errors: ProblemFieldError[] | undefined;
  /** How many errors there were, when more than `errors` holds; else undefined. */
  readonly errorCount: number | undefined;
  /** Headers answered with the problem. */
  readonly headers: Record<string, string>;
  /** Whether the answer closes the connection (the body was left unread). */
  readonly closeConnection: boolean;

  constructor(init: HttpProblemInit) {
    super(init.detail);
    this.name = 'HttpProblem';
    this.status = init.status;
    this.slug = init.slug;
    this.type = `urn:service-webhooks:problem:${init.slug}`;
    this.title = init.title;
    this.detail = init.detail;
    this.field = init.field;
    this.errors = init.errors?.slice(0, MAX_FIELD_ERRORS);
    const count = init.errorCount ?? init.errors?.length;
    this.errorCount = count !== undefined && count > (this.errors?.length ?? 0) ? count : undefined;
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
      ...(this.errorCount === undefined ? {} : { errorCount: this.errorCount }),
    };
  }
}
