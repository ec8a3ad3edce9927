import type { z } from 'zod';
import { ApiProblem } from './api-problem';

/** A 400 naming the first field a console request got wrong, as the console API answers it. */
export function fieldProblem(error: z.ZodError, slug: string, what: string): ApiProblem {
  const errors = error.issues.map((issue) => ({
    field:
      issue.path
        .map((part) => (typeof part === 'number' ? `[${part}]` : String(part)))
        .join('.')
        .replace(/\.\[/g, '[') || '(body)',
    rule: issue.message,
  }));
  const first = errors[0] ?? { field: '(body)', rule: 'is invalid' };
  return new ApiProblem({
    status: 400,
    slug,
    title: 'Bad Request',
    detail: `${what} "${first.field}" ${first.rule}.`,
    field: first.field,
    errors,
  });
}
