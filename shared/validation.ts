// Parsing input with a zod schema at an edge (a request, a queue message, an activity input): a failure becomes
// one ValidationError that lists every problem by field, so inner code works with the inferred type only.
// Schemas word their messages as what is wrong ("must be a UUID ..."); the field's name is added here, once.
import { z } from 'zod';
import { ValidationError } from './errors.js';

/** Where an issue of the value as a whole (not of one field) is reported. */
const WHOLE_VALUE = '(body)';

export function parseInput<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || WHOLE_VALUE,
    message: issue.message,
  }));
  throw new ValidationError(`Invalid ${what}: ${issues.map(describeIssue).join('; ')}.`, issues);
}

/** "chatMessageId must be a UUID ..."; an issue of the whole value is its message alone. */
export function describeIssue(issue: { path: string; message: string }): string {
  return issue.path === WHOLE_VALUE ? issue.message : `${issue.path} ${issue.message}`;
}

/**
 * Query values read from text but documented as whole numbers: a query string carries only text, so the schema
 * parses a string, while a client's OpenAPI generator should type the value as the integer it stands for.
 */
export const queryIntegers = z.registry<{ minimum: number; maximum: number; default: number }>();

/** A page size in a query string: a whole number from 1 to `max`, `fallback` when absent. */
export function pageLimitSchema(max: number, fallback: number) {
  const message = `must be a whole number from 1 to ${max}`;
  const schema = z
    .string({ error: message })
    .regex(/^\d{1,6}$/, message)
    .transform(Number)
    .refine((value) => value >= 1 && value <= max, message)
    .optional()
    .transform((value) => value ?? fallback)
    .describe(`a whole number from 1 to ${max}, default ${fallback}`);
  queryIntegers.add(schema, { minimum: 1, maximum: max, default: fallback });
  return schema;
}
