import type { z } from 'zod';
import { HttpProblem, type ProblemFieldError } from './http-problem';

function fieldName(path: readonly PropertyKey[]): string {
  return path
    .map((part) => (typeof part === 'number' ? `[${part}]` : String(part)))
    .join('.')
    .replace(/\.\[/g, '[');
}

/** Turns zod issues into a 400 problem that names each failing field and its rule. */
export function schemaProblem(
  error: z.ZodError,
  options: { prefix: string; slug: string; what: string },
): HttpProblem {
  const errors: ProblemFieldError[] = error.issues.map((issue) => ({
    field: `${options.prefix}${fieldName(issue.path)}` || '(body)',
    rule: issue.message,
  }));
  const first = errors[0] ?? { field: '(body)', rule: 'is invalid' };
  return new HttpProblem({
    status: 400,
    slug: options.slug,
    title: 'Bad Request',
    detail: `${options.what} "${first.field}" ${first.rule}.`,
    field: first.field,
    errors,
  });
}
