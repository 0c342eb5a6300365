// Mapping of the port's messages and tools onto Chat Completions request fields.
import { describe, expect, it } from 'vitest';
import { maxTokensField, toWireMessages, toWireTools } from './openai-chat-request.js';

describe('toWireMessages', () => {
  it('maps tool calls and tool results to the Chat Completions shapes', () => {
    expect(
      toWireMessages([
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'add 2 and 3' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'c1', name: 'add', arguments: '{"a":2,"b":3}' }],
        },
        { role: 'tool', tool_call_id: 'c1', content: '5' },
        { role: 'assistant', content: 'It is 5.', tool_calls: [] },
      ]),
    ).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'add 2 and 3' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '5' },
      { role: 'assistant', content: 'It is 5.' },
    ]);
  });

  it('wraps tool specs as function tools', () => {
    expect(toWireTools([{ name: 'add', description: 'adds', parameters: { type: 'object' } }])).toEqual([
      { type: 'function', function: { name: 'add', description: 'adds', parameters: { type: 'object' } } },
    ]);
  });
});

describe('maxTokensField', () => {
  it('uses max_completion_tokens for Azure and api.openai.com, max_tokens elsewhere', () => {
    expect(maxTokensField({ kind: 'azure-openai' }, 10)).toEqual({ max_completion_tokens: 10 });
    expect(maxTokensField({ kind: 'openai-compatible', baseUrl: 'https://api.openai.com/v1' }, 10)).toEqual({
      max_completion_tokens: 10,
    });
    expect(maxTokensField({ kind: 'openai-compatible', baseUrl: 'http://localhost:11434/v1' }, 10)).toEqual({
      max_tokens: 10,
    });
  });
});
