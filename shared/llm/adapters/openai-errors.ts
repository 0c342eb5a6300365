// Maps what the openai SDK throws to the LLM port's LlmError, keeping the provider's status and message and
// adding the one hint that usually fixes it. Pure: no I/O, safe to unit-test with built errors.
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  OpenAIError,
} from 'openai';
import { LlmError, type LlmErrorDetails } from '../llm-gateway.js';

export interface LlmErrorContext {
  /** What to call the endpoint in messages, e.g. `Azure OpenAI https://x.openai.azure.com`. */
  endpoint: string;
  /** Model or deployment the request named. */
  model: string;
  kind: 'azure-openai' | 'openai-compatible';
  timeoutMs: number;
}

export function toLlmError(error: unknown, context: LlmErrorContext): LlmError {
  if (error instanceof LlmError) return error;
  // The SDK wraps what a token provider throws; ours already throws a complete LlmError.
  if (error instanceof OpenAIError && error.cause instanceof LlmError) return error.cause;
  const options = { cause: error };
  if (error instanceof APIUserAbortError) {
    return new LlmError('The LLM request was cancelled.', { retryable: false }, options);
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new LlmError(
      `${context.endpoint} did not answer within ${context.timeoutMs} ms.`,
      { retryable: true },
      options,
    );
  }
  if (error instanceof APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${describeCause(error.cause)}` : '';
    return new LlmError(`Cannot reach ${context.endpoint}${cause}.`, { retryable: true }, options);
  }
  if (error instanceof APIError) return fromApiError(error, context);
  if (error instanceof SyntaxError) {
    return new LlmError(
      `${context.endpoint} sent a malformed response: ${error.message}`,
      { retryable: true },
      options,
    );
  }
  if (error instanceof OpenAIError) {
    return new LlmError(`The LLM client is misconfigured: ${error.message}`, { retryable: false }, options);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new LlmError(`The LLM request failed: ${message}`, { retryable: false }, options);
}

/** The parts of the SDK's APIError this mapping reads. */
interface ProviderFailure {
  status: number | undefined;
  error: unknown;
  code: string | null | undefined;
  message: string;
}

/**
 * Provider codes that say the account, not the moment, is the problem: OpenAI answers a spent quota with HTTP 429
 * `insufficient_quota`, which trying again later (or redelivering the work) cannot get past.
 */
const PERMANENT_CODES: ReadonlySet<string> = new Set(['insufficient_quota', 'billing_hard_limit_reached']);

function fromApiError(error: ProviderFailure, context: LlmErrorContext): LlmError {
  const status = error.status;
  const providerMessage = providerMessageOf(error);
  const permanent =
    error.code !== null && error.code !== undefined && PERMANENT_CODES.has(String(error.code));
  const details: LlmErrorDetails = {
    retryable: !permanent && (status === undefined || isRetryableStatus(status)),
  };
  if (status !== undefined) details.providerStatus = status;
  const code = error.code;
  if (code !== null && code !== undefined) details.providerCode = String(code);
  const options = { cause: error };

  if (status === undefined) {
    return new LlmError(
      `${context.endpoint} reported an error mid-stream: ${providerMessage}`,
      details,
      options,
    );
  }
  const prefix = `${context.endpoint} answered HTTP ${status}: ${providerMessage}`;
  if (status === 401 || status === 403) {
    const hint =
      context.kind === 'azure-openai'
        ? 'Check the API key, or (Entra ID) that the identity has the "Cognitive Services OpenAI User" role on the resource.'
        : 'Check the API key configured for this endpoint.';
    return new LlmError(`${prefix} ${hint}`, details, options);
  }
  if (status === 404) {
    const what = context.kind === 'azure-openai' ? 'deployment' : 'model';
    return new LlmError(
      `${prefix} Check the ${what} name "${context.model}" and the endpoint URL.`,
      details,
      options,
    );
  }
  if (status === 429) {
    if (permanent) return new LlmError(`${prefix} (the account's quota is spent)`, details, options);
    return new LlmError(`${prefix} (rate limited; retries exhausted)`, details, options);
  }
  return new LlmError(prefix, details, options);
}

/** The provider's own words: `error.message` of the body, whatever else the envelope holds. */
function providerMessageOf(error: ProviderFailure): string {
  const body = error.error as Record<string, unknown> | undefined;
  const message = body?.['message'];
  if (typeof message === 'string' && message !== '') return message;
  // The SDK prefixes its message with the status; drop it so the status is not said twice.
  return error.message.replace(/^\d{3}\s+/, '');
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

function describeCause(cause: Error): string {
  const nested = cause.cause instanceof Error ? ` (${cause.cause.message})` : '';
  return `${cause.message}${nested}`;
}
