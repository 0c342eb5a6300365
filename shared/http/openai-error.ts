// Errors as OpenAI's API answers them, for the OpenAI-compatible routes: `{error: {message, type, code, param}}`
// with the status and headers (retry-after) the problem+json answer would have. Its clients read only that shape.
import type { HttpResponseInit, InvocationContext } from '@azure/functions';
import { z } from 'zod';
import { toProblemResponse, type ProblemDetails } from './problem.js';

export const openAiErrorSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z
      .string()
      .describe(
        'invalid_request_error, authentication_error, permission_error, not_found_error, conflict_error, rate_limit_error, server_error',
      ),
    code: z.string().nullable().describe('the stable code the problem+json answer would carry'),
    param: z.string().nullable().describe('the first field of the request that does not parse'),
  }),
});
export type OpenAiError = z.infer<typeof openAiErrorSchema>;

/** OpenAI's error `type` for a status. */
export function openAiErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** The body of an OpenAI-shaped error for a problem. */
export function openAiErrorBody(
  problem: Pick<ProblemDetails, 'status' | 'detail' | 'code' | 'errors'>,
): OpenAiError {
  return {
    error: {
      message: problem.detail,
      type: openAiErrorType(problem.status),
      code: problem.code,
      param: problem.errors?.[0]?.path ?? null,
    },
  };
}

/** Maps any error as toProblemResponse does (the same status, headers and logging), in OpenAI's shape. */
export function toOpenAiErrorResponse(value: unknown, context: InvocationContext): HttpResponseInit {
  const problem = toProblemResponse(value, context);
  const details = JSON.parse(typeof problem.body === 'string' ? problem.body : '{}') as ProblemDetails;
  return {
    status: problem.status ?? details.status,
    headers: { ...(problem.headers as Record<string, string>), 'content-type': 'application/json' },
    body: JSON.stringify(openAiErrorBody(details)),
  };
}
