// Maps any error to an RFC 9457 problem details response: one place decides what a client sees.
// Known AppErrors keep their status and message; anything else is a 500 that reveals nothing internal.
import type { HttpResponseInit, InvocationContext } from '@azure/functions';
import { z } from 'zod';
import { AppError, NotReadyError, QuotaExceededError, ValidationError, ensureError } from '../errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** What every error answers (RFC 9457), with the stable `code` clients branch on; the OpenAPI document shows it. */
export const problemDetailsSchema = z.object({
  type: z.string().describe('a URI naming the HTTP status'),
  title: z.string().describe("the status's name"),
  status: z.number().int(),
  detail: z.string().describe('what went wrong and what to fix'),
  code: z
    .string()
    .describe('stable: validation_failed, unauthenticated, forbidden, not_found, conflict, ...'),
  instance: z.string().optional().describe('the URL of the request'),
  errors: z
    .array(z.object({ path: z.string(), message: z.string() }).readonly())
    .readonly()
    .optional()
    .describe('a 400: each field that does not parse'),
  limit: z
    .string()
    .optional()
    .describe(
      'a 429 quota_exceeded: the limit hit (concurrent-turns, messages-per-minute, tokens-per-day, cost-per-month, knowledge-bytes)',
    ),
  allowed: z.number().optional().describe('a 429 quota_exceeded: the limit as set'),
  current: z.number().optional().describe("a 429 quota_exceeded: the caller's current value"),
  retryAfterSeconds: z
    .number()
    .int()
    .optional()
    .describe('a 429: when to try again, as the retry-after header says'),
});

export type ProblemDetails = z.infer<typeof problemDetailsSchema>;

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function problemResponse(
  status: number,
  code: string,
  detail: string,
  extra: Partial<
    Pick<ProblemDetails, 'instance' | 'errors' | 'limit' | 'allowed' | 'current' | 'retryAfterSeconds'>
  > = {},
  headers: Record<string, string> = {},
): HttpResponseInit {
  const body: ProblemDetails = {
    type: `https://httpstatuses.io/${status}`,
    title: titles[status] ?? 'Error',
    status,
    detail,
    code,
    ...extra,
  };
  return {
    status,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}

/** The one mapper from a thrown value to the HTTP response a client gets. Logs what it hides. */
export function toProblemResponse(
  value: unknown,
  context: InvocationContext,
  instance?: string,
): HttpResponseInit {
  const where = instance === undefined ? {} : { instance };
  if (value instanceof AppError) {
    const errors =
      value instanceof ValidationError && value.issues.length > 0 ? { errors: value.issues } : {};
    if (value.status >= 500) context.error(`${value.code}: ${value.message}`, value.cause ?? '');
    const retry: Record<string, string> =
      value instanceof NotReadyError || value instanceof QuotaExceededError
        ? { 'retry-after': String(value.retryAfterSeconds) }
        : {};
    const quota =
      value instanceof QuotaExceededError
        ? {
            limit: value.limit,
            allowed: value.allowed,
            current: value.current,
            retryAfterSeconds: value.retryAfterSeconds,
          }
        : {};
    return problemResponse(value.status, value.code, value.message, { ...where, ...errors, ...quota }, retry);
  }
  const error = ensureError(value);
  context.error(`Unhandled error: ${error.stack ?? error.message}`);
  return problemResponse(500, 'internal_error', 'The request failed unexpectedly; it can be retried.', where);
}
