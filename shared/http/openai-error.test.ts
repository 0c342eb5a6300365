import { describe, expect, it, vi } from 'vitest';
import type { InvocationContext } from '@azure/functions';
import { QuotaExceededError, UnauthenticatedError, ValidationError } from '../errors.js';
import { toOpenAiErrorResponse } from './openai-error.js';

const context = { error: vi.fn(), warn: vi.fn() } as unknown as InvocationContext;

function text(body: unknown): string {
  if (typeof body !== 'string') throw new Error('expected a JSON text body');
  return body;
}

function parse(body: unknown) {
  return JSON.parse(text(body)) as { error: Record<string, unknown> };
}

describe('OpenAI-shaped errors', () => {
  it('names the first field that does not parse as the param', () => {
    const response = toOpenAiErrorResponse(
      new ValidationError('Invalid request: model is required.', [{ path: 'model', message: 'required' }]),
      context,
    );
    expect(response.status).toBe(400);
    expect(parse(response.body).error).toEqual({
      message: 'Invalid request: model is required.',
      type: 'invalid_request_error',
      code: 'validation_failed',
      param: 'model',
    });
  });

  it('keeps a quota refusal as 429 with its retry-after header', () => {
    const response = toOpenAiErrorResponse(
      new QuotaExceededError('Too many turns at once.', 'concurrent-turns', 1, 1, 2),
      context,
    );
    expect(response.status).toBe(429);
    expect((response.headers as Record<string, string>)['retry-after']).toBe('2');
    expect((response.headers as Record<string, string>)['content-type']).toBe('application/json');
    expect(parse(response.body).error).toMatchObject({
      type: 'rate_limit_error',
      code: 'quota_exceeded',
      param: null,
    });
  });

  it('answers a missing identity as an authentication error', () => {
    const response = toOpenAiErrorResponse(new UnauthenticatedError(), context);
    expect(response.status).toBe(401);
    expect(parse(response.body).error.type).toBe('authentication_error');
  });

  it('hides an unexpected error behind a server error', () => {
    const response = toOpenAiErrorResponse(new Error('secret detail'), context);
    expect(response.status).toBe(500);
    expect(text(response.body)).not.toContain('secret detail');
    expect(parse(response.body).error.type).toBe('server_error');
  });
});
