// Mapping of the port's messages, tools and reasoning options onto Responses API request fields.
import { describe, expect, it } from 'vitest';
import { toResponsesInput, toResponsesReasoning, toResponsesTools } from './openai-responses-request.js';

describe('toResponsesInput', () => {
  it('makes the leading system messages the instructions, tool calls function_call items, results outputs', () => {
    expect(
      toResponsesInput([
        { role: 'system', content: 'be brief' },
        { role: 'system', content: 'Summary of the earlier part: ...' },
        { role: 'user', content: 'add 2 and 3, and multiply them' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'call_1', name: 'add', arguments: '{"a":2,"b":3}' },
            { id: 'call_2', name: 'multiply', arguments: '{"a":2,"b":3}' },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '5' },
        { role: 'tool', tool_call_id: 'call_2', content: '6' },
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [{ id: 'c3', name: 'f', arguments: '{}' }],
        },
        { role: 'tool', tool_call_id: 'c3', content: 'ok' },
        { role: 'system', content: 'a late note' },
        { role: 'assistant', content: 'It is 5 and 6.', tool_calls: [] },
      ]),
    ).toEqual({
      instructions: 'be brief\n\nSummary of the earlier part: ...',
      input: [
        { role: 'user', content: 'add 2 and 3, and multiply them' },
        { type: 'function_call', call_id: 'call_1', name: 'add', arguments: '{"a":2,"b":3}' },
        { type: 'function_call', call_id: 'call_2', name: 'multiply', arguments: '{"a":2,"b":3}' },
        { type: 'function_call_output', call_id: 'call_1', output: '5' },
        { type: 'function_call_output', call_id: 'call_2', output: '6' },
        { role: 'assistant', content: 'Let me check.' },
        { type: 'function_call', call_id: 'c3', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c3', output: 'ok' },
        { role: 'developer', content: 'a late note' },
        { role: 'assistant', content: 'It is 5 and 6.' },
      ],
    });
  });

  it('leaves instructions out when the prompt has no system message', () => {
    expect(toResponsesInput([{ role: 'user', content: 'hi' }])).toEqual({
      input: [{ role: 'user', content: 'hi' }],
    });
  });
});

describe('toResponsesTools', () => {
  it('makes flat function tools, not strict (the tools have optional fields)', () => {
    expect(toResponsesTools([{ name: 'add', description: 'adds', parameters: { type: 'object' } }])).toEqual([
      { type: 'function', name: 'add', description: 'adds', parameters: { type: 'object' }, strict: false },
    ]);
  });
});

describe('toResponsesReasoning', () => {
  it('sends nothing by default, a summary request with an effort, and no summary without reasoning', () => {
    expect(toResponsesReasoning(undefined)).toBeUndefined();
    expect(toResponsesReasoning('low')).toEqual({ effort: 'low', summary: 'auto' });
    expect(toResponsesReasoning('none')).toEqual({ effort: 'none' });
    expect(toResponsesReasoning('high', 'detailed')).toEqual({ effort: 'high', summary: 'detailed' });
    // An organisation OpenAI has not verified is refused a summary: the effort alone.
    expect(toResponsesReasoning('low', 'off')).toEqual({ effort: 'low' });
  });
});
