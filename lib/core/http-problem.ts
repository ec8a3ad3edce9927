import { MAX_FIELD_ERRORS, type FieldError as ProblemFieldError } from '../events/invalid-event-error';

export type { FieldError as ProblemFieldError } from '../events/invalid-event-error';

export interface HttpProblemInit {
  status: number;
  /** Short slug; becomes the problem `type` as `urn:service-webhooks:problem:<slug>`. */
  slug: string;
  title: string;
  detail: string;
  field?: string | undefined;
  /** Kept to the first 20; `errorCount` tells how many there were. */
  errors?: ProblemFieldError[] | undefined;
  errorCount?: number | undefined;
  headers?: Record<string, string>;
  /** True when the request body was left unread, so the connection cannot be reused. */
  closeConnection?: boolean;
}

/** An RFC 9457 problem the receiver answers with; thrown or passed to `next()` by every step. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly slug: string;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  readonly field: string | undefined;
  readonly errors: ProblemFieldError[] | undefined;
  readonly errorCount: number | undefined;
  readonly headers: Record<string, string>;
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
