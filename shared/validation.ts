// Parsing input with a zod schema at an edge (a request, a queue message, an activity input): a failure becomes
// one ValidationError that lists every problem by field, so inner code works with the inferred type only.
import type { z } from 'zod';
import { ValidationError } from './errors.js';

export function parseInput<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(body)',
    message: issue.message,
  }));
  throw new ValidationError(
    `Invalid ${what}: ${issues.map((issue) => `${issue.path} ${issue.message}`).join('; ')}.`,
    issues,
  );
}
