// Edge cases of chunk assembly that the recorded streams do not contain (the replay tests cover those).
import { describe, expect, it } from 'vitest';
import { ChatStreamAssembler } from './chat-stream-assembler.js';

const choice = (delta: Record<string, unknown>, finish_reason: string | null = null, index = 0) => ({
  choices: [{ index, delta, finish_reason }],
});

describe('ChatStreamAssembler', () => {
  it('treats explicit nulls as absent and never trims whitespace-only deltas', () => {
    const assembler = new ChatStreamAssembler();
    assembler.push(choice({ role: null, content: null, reasoning_content: null, tool_calls: null }));
    const deltas = assembler.push(choice({ content: ' \n\n' }));
    assembler.push({ ...choice({}, 'stop'), usage: null });
    expect(deltas).toEqual([{ type: 'content', text: ' \n\n' }]);
    expect(assembler.result()).toMatchObject({ content: ' \n\n', reasoning: '', finishReason: 'stop' });
    expect(assembler.result().usage).toBeUndefined();
  });

  it('reads reasoning from `reasoning` too, but never counts the same text twice', () => {
    const assembler = new ChatStreamAssembler();
    assembler.push(choice({ reasoning: 'Hmm, ' }));
    assembler.push(choice({ reasoning_content: 'so', reasoning: 'so' }));
    expect(assembler.result().reasoning).toBe('Hmm, so');
  });

  it('keys tool calls by index even when fragments interleave', () => {
    const assembler = new ChatStreamAssembler();
    const announced = [
      ...assembler.push(
        choice({
          tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } }],
        }),
      ),
      ...assembler.push(
        choice({
          tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '{"y"' } }],
        }),
      ),
      ...assembler.push(choice({ tool_calls: [{ function: { arguments: '{"x":1}' }, index: 0 }] })),
      ...assembler.push(choice({ tool_calls: [{ index: 1, function: { arguments: ':2}' } }] })),
    ];
    assembler.push(choice({}, 'tool_calls'));
    expect(announced).toEqual([
      { type: 'tool-call', index: 0, id: 'a', name: 'f' },
      { type: 'tool-call', index: 1, id: 'b', name: 'g' },
    ]);
    expect(assembler.result().toolCalls).toEqual([
      { id: 'a', name: 'f', arguments: '{"x":1}' },
      { id: 'b', name: 'g', arguments: '{"y":2}' },
    ]);
  });

  it('copes with servers that omit index or id, or send arguments as an object', () => {
    const assembler = new ChatStreamAssembler();
    assembler.push(choice({ tool_calls: [{ id: 'first', function: { name: 'f', arguments: '{"a"' } }] }));
    assembler.push(choice({ tool_calls: [{ function: { arguments: ':1}' } }] }));
    assembler.push(choice({ tool_calls: [{ id: 'second', function: { name: 'g', arguments: { b: 2 } } }] }));
    assembler.push(choice({ tool_calls: [{ index: 5, function: { name: 'h' } }] }));
    expect(assembler.result().toolCalls).toEqual([
      { id: 'first', name: 'f', arguments: '{"a":1}' },
      { id: 'second', name: 'g', arguments: '{"b":2}' },
      { id: 'call_5', name: 'h', arguments: '{}' },
    ]);
    // No finish_reason arrived: the result says so and the gateway treats the stream as cut.
    expect(assembler.finished).toBe(false);
    expect(assembler.result().finishReason).toBe('tool_calls');
  });

  it('keeps reading after finish_reason: usage and model come from chunks without choices', () => {
    const assembler = new ChatStreamAssembler();
    assembler.push({ id: '', model: '', choices: [], prompt_filter_results: [] });
    assembler.push({ model: 'gpt-x', ...choice({ content: 'Hi' }, 'stop') });
    assembler.push({
      model: 'gpt-x',
      choices: [],
      usage: {
        prompt_tokens: 3,
        completion_tokens: 1,
        total_tokens: 4,
        prompt_tokens_details: null,
        reasoning_tokens: 0,
      },
    });
    expect(assembler.finished).toBe(true);
    expect(assembler.result()).toEqual({
      content: 'Hi',
      reasoning: '',
      toolCalls: [],
      finishReason: 'stop',
      model: 'gpt-x',
      usage: { promptTokens: 3, completionTokens: 1, totalTokens: 4, reasoningTokens: 0 },
    });
  });

  it('ignores other choices, non-objects and obfuscation padding, and lets the caller mark cancellation', () => {
    const assembler = new ChatStreamAssembler();
    expect(assembler.push(null)).toEqual([]);
    expect(assembler.push('data')).toEqual([]);
    assembler.push({ ...choice({ content: 'other' }, null, 1) });
    assembler.push({ obfuscation: 'xyz', ...choice({ content: 'mine' }) });
    expect(assembler.result('cancelled')).toMatchObject({ content: 'mine', finishReason: 'cancelled' });
  });
});
