// JSON output through the real openai client on a scripted server: the strict json_schema format, one corrective
// turn when validation fails, and a failure when the corrected answer is still invalid.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedFetch } from '../../../test/support/llm-wire-replay.js';
import { openAiCompatible } from '../../../test/support/llm-connections.js';
import { createLlmGateway } from './openai-gateway.js';

const encoder = new TextEncoder();

describe('completeJson', () => {
  const schema = z.object({ title: z.string().min(3), tags: z.array(z.string()) });
  const completion = (content: string) =>
    encoder.encode(
      JSON.stringify({
        id: 'c',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      }),
    );

  it('sends a strict json_schema format and asks once for a correction when validation fails', async () => {
    const { fetch, requests } = scriptedFetch([
      { chunks: [completion('{"title":"x","tags":[]}')] },
      { chunks: [completion('```json\n{"title":"Trip to Rome","tags":["travel"]}\n```')] },
    ]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });

    const value = await gateway.completeJson({
      messages: [{ role: 'user', content: 'title?' }],
      schema,
      name: 'title',
    });

    expect(value).toEqual({ title: 'Trip to Rome', tags: ['travel'] });
    expect(requests[0]?.body['response_format']).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'title', strict: true, schema: { type: 'object', required: ['title', 'tags'] } },
    });
    const retryMessages = requests[1]?.body['messages'] as { role: string; content: string }[];
    expect(retryMessages.at(-1)?.content).toMatch(/title: Too small/);
  });

  it('fails with a DependencyError when the second answer is still invalid', async () => {
    const { fetch } = scriptedFetch([
      { chunks: [completion('nope')] },
      { chunks: [completion('{"title":1}')] },
    ]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });
    await expect(gateway.completeJson({ messages: [], schema, name: 'title' })).rejects.toThrow(
      /unusable "title" JSON: The JSON does not match the schema/,
    );
  });
});
