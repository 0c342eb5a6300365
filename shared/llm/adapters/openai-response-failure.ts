// The Responses API's own failures (an `error` event, `response.failed`, a failed non-streamed response) as
// LlmErrors, retryable only when the provider's code says a later attempt may get past it.
import { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { LlmError } from '../llm-gateway.js';
import type { ResponseFailure } from '../responses-stream-assembler.js';

/**
 * The Responses API's error codes a later attempt may get past (openai-node's ResponseError codes); any other
 * (insufficient_quota, invalid_prompt, ...) fails the same way again.
 */
const RETRYABLE_RESPONSE_CODES: ReadonlySet<string> = new Set([
  'server_error',
  'rate_limit_exceeded',
  'vector_store_timeout',
]);

/** A failure the Responses API reported in the stream (an `error` event, `response.failed`). */
export function responseFailed(endpointName: string, failure: ResponseFailure): LlmError {
  const code = failure.code ?? failure.type;
  return new LlmError(`${endpointName} reported an error mid-stream: ${failure.message}`, {
    ...(code !== undefined ? { providerCode: code } : {}),
    // Without a code nothing says it is permanent (as for Chat Completions' in-stream errors).
    retryable: code === undefined || RETRYABLE_RESPONSE_CODES.has(code),
  });
}

/**
 * An error event the SDK threw while reading the stream: an APIError without a status, other than the SDK's own
 * connection, timeout and abort errors (subclasses without a status too).
 */
export function isInBandError(error: unknown): error is APIError {
  return (
    error instanceof APIError &&
    error.status === undefined &&
    !(error instanceof APIConnectionError) &&
    !(error instanceof APIUserAbortError)
  );
}

/** The details of an in-band error the SDK threw (it hands over the event's `error` object as `error`). */
export function failureOf(error: {
  error: unknown;
  code: string | null | undefined;
  message: string;
}): ResponseFailure {
  const body = error.error as Record<string, unknown> | undefined;
  const message = body?.['message'];
  const type = body?.['type'];
  const failure: ResponseFailure = {
    message: typeof message === 'string' && message !== '' ? message : error.message,
  };
  if (error.code !== null && error.code !== undefined) failure.code = String(error.code);
  if (typeof type === 'string' && type !== '') failure.type = type;
  return failure;
}
