// The request contracts' bounds on what a client sends: a tool's parameters may be any JSON Schema object, but not
// one nested so deeply that serialising the turn's message would overflow the stack.
import { describe, expect, it } from 'vitest';
import { chatCompletionRequestSchema, TOOL_PARAMETERS_MAX_DEPTH } from './contracts.js';
import { createResponseRequestSchema } from './responses-contracts.js';

/** An object `depth` levels deep: {"p":{"p":...1}}, built from text as a request body arrives. */
function nested(depth: number): Record<string, unknown> {
  return JSON.parse(`${'{"p":'.repeat(depth)}1${'}'.repeat(depth)}`) as Record<string, unknown>;
}

const completion = (parameters: Record<string, unknown>) => ({
  model: 'm',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [{ type: 'function', function: { name: 'deep', parameters } }],
});
const response = (parameters: Record<string, unknown>) => ({
  model: 'm',
  input: 'hi',
  tools: [{ type: 'function', name: 'deep', parameters }],
});

describe("a client tool's parameters", () => {
  it('takes a usual JSON Schema, up to the depth limit', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    expect(chatCompletionRequestSchema.safeParse(completion(schema)).success).toBe(true);
    expect(chatCompletionRequestSchema.safeParse(completion(nested(TOOL_PARAMETERS_MAX_DEPTH))).success).toBe(
      true,
    );
    expect(createResponseRequestSchema.safeParse(response(schema)).success).toBe(true);
  });

  it('refuses parameters nested deeper than the limit, which JSON.stringify could not write', () => {
    const deep = nested(30_000);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    const refused = chatCompletionRequestSchema.safeParse(completion(deep));
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.path).toEqual(['tools', 0, 'function', 'parameters']);
    expect(createResponseRequestSchema.safeParse(response(deep)).success).toBe(false);
    expect(
      chatCompletionRequestSchema.safeParse(completion(nested(TOOL_PARAMETERS_MAX_DEPTH + 1))).success,
    ).toBe(false);
  });
});
