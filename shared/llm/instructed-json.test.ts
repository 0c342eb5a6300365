// The instructed JSON call: the instructions as the system message, the input as one JSON user message, and the
// schema and format name handed to the gateway as they are.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { completeInstructedJson } from './instructed-json.js';
import type { CompleteJsonRequest } from './llm-gateway.js';

describe('completeInstructedJson', () => {
  it('sends the instructions and the JSON input as two messages, and answers what the gateway validated', async () => {
    const requests: CompleteJsonRequest<unknown>[] = [];
    const schema = z.object({ summary: z.string() });
    const llm = {
      completeJson<T>(request: CompleteJsonRequest<T>): Promise<T> {
        requests.push(request);
        return Promise.resolve(request.schema.parse({ summary: ' short ' }));
      },
    };
    const input = { previousSummary: '', exchanges: [{ question: 'Why "quotes"?\n', answer: 'é' }] };

    const answer = await completeInstructedJson(llm, {
      instructions: 'Summarise.',
      input,
      schema,
      name: 'session_summary',
    });

    expect(answer).toEqual({ summary: ' short ' });
    expect(requests).toHaveLength(1);
    expect(requests[0]?.messages).toEqual([
      { role: 'system', content: 'Summarise.' },
      { role: 'user', content: JSON.stringify(input) },
    ]);
    expect(requests[0]?.schema).toBe(schema);
    expect(requests[0]?.name).toBe('session_summary');
  });

  it('lets what the gateway throws through', async () => {
    const llm = { completeJson: () => Promise.reject(new Error('unusable JSON')) };
    await expect(
      completeInstructedJson(llm, { instructions: 'x', input: {}, schema: z.object({}), name: 'n' }),
    ).rejects.toThrow('unusable JSON');
  });
});
