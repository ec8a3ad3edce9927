import type { z } from 'zod';

/** One rule an event broke, named by the field it concerns. */
export interface FieldError {
  /** The field, as a path into the body: `data.details.card_number`, `id`. */
  field: string;
  /** What it must be: `is required`, `must be a non-empty string`. */
  rule: string;
}

/** At most this many field errors are kept: a body of a million bad fields must not become a huge answer. */
export const MAX_FIELD_ERRORS = 20;

/**
 * An event that cannot be accepted as sent. The receiver core turns it into a 400 problem; events/
 * knows nothing of HTTP.
 */
export class InvalidEventError extends Error {
  readonly slug: string;
  readonly field: string | undefined;
  readonly errors: FieldError[] | undefined;
  /** How many field errors there were, the ones past {@link MAX_FIELD_ERRORS} included. */
  readonly errorCount: number;

  constructor(init: {
    slug: string;
    detail: string;
    field?: string;
    errors?: FieldError[];
    errorCount?: number;
  }) {
    super(init.detail);
    this.name = 'InvalidEventError';
    this.slug = init.slug;
    this.field = init.field;
    this.errors = init.errors?.slice(0, MAX_FIELD_ERRORS);
    this.errorCount = init.errorCount ?? init.errors?.length ?? 0;
  }
}

function fieldName(path: readonly PropertyKey[]): string {
  return path
    .map((part) => (typeof part === 'number' ? `[${part}]` : String(part)))
    .join('.')
    .replace(/\.\[/g, '[');
}

/** Turns zod issues into an {@link InvalidEventError} naming each failing field and its rule. */
export function schemaError(
  error: z.ZodError,
  options: { prefix: string; slug: string; what: string },
): InvalidEventError {
  const errors: FieldError[] = error.issues.slice(0, MAX_FIELD_ERRORS).map((issue) => ({
    field: `${options.prefix}${fieldName(issue.path)}` || '(body)',
    rule: issue.message,
  }));
  const first = errors[0] ?? { field: '(body)', rule: 'is invalid' };
  return new InvalidEventError({
    slug: options.slug,
    detail: `${options.what} "${first.field}" ${first.rule}.`,
    field: first.field,
    errors,
    errorCount: error.issues.length,
  });
}
