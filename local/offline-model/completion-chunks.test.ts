// The wire shapes the offline model emits, checked against what OpenAI sends.
import { describe, expect, it } from 'vitest';
import { completionBody, streamEvents, tokenizeReply, type CompletionMeta } from './completion-chunks.js';

const meta: CompletionMeta = {
  id: 'chatcmpl-offline-x',
  created: 1,
  model: 'm',
  promptTokens: 7,
  toolCallIds: ['call_a', 'call_b'],
  includeUsage: true,
};

describe('streamEvents', () => {
  it('sends a role chunk, one token per delta, a finish chunk and a usage chunk', () => {
    const reply = tokenizeReply({ reasoning: 'Hmm.', content: 'Hi there!', toolCalls: [] }, meta);
    const events = streamEvents(reply, meta);
    const deltas = events.map((e) => (e.chunk['choices'] as { delta: unknown }[])[0]?.delta);
    expect(deltas).toEqual([
      { role: 'assistant', content: '', refusal: null },
      { reasoning_content: 'Hmm' },
      { reasoning_content: '.' },
      { content: 'Hi' },
      { content: ' there' },
      { content: '!' },
      {},
      undefined,
    ]);
    expect(events.map((e) => e.paced)).toEqual([false, true, true, true, true, true, false, false]);
    expect(events.at(-2)?.chunk).toMatchObject({ choices: [{ finish_reason: 'stop' }], usage: null });
    expect(events.at(-1)?.chunk).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: 7,
        completion_tokens: 5,
        total_tokens: 12,
        completion_tokens_details: { reasoning_tokens: 2 },
      },
    });
  });

  it('fragments tool calls like OpenAI: id/type/name with arguments "" first, then argument pieces', () => {
    const reply = tokenizeReply(
      {
        reasoning: '',
        content: '',
        toolCalls: [
          { name: 'f', arguments: '{"a":1}' },
          { name: 'g', arguments: '{}' },
        ],
      },
      meta,
    );
    const toolDeltas = streamEvents(reply, { ...meta, includeUsage: false })
      .map((e) => (e.chunk['choices'] as { delta: { tool_calls?: unknown[] } }[])[0]?.delta.tool_calls?.[0])
      .filter(Boolean);
    expect(toolDeltas).toEqual([
      { index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } },
      { index: 0, function: { arguments: '{"' } },
      { index: 0, function: { arguments: 'a' } },
      { index: 0, function: { arguments: '":' } },
      { index: 0, function: { arguments: '1' } },
      { index: 0, function: { arguments: '}' } },
      { index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '' } },
      { index: 1, function: { arguments: '{}' } },
    ]);
  });

  it('cuts at max tokens with finish_reason length, and the completion body says the same', () => {
    const limited = { ...meta, maxTokens: 2 };
    const reply = tokenizeReply({ reasoning: '', content: 'one two three', toolCalls: [] }, limited);
    expect(reply).toMatchObject({ content: ['one', ' two'], finishReason: 'length' });
    expect(completionBody(reply, limited)).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { role: 'assistant', content: 'one two' }, finish_reason: 'length' }],
      usage: { completion_tokens: 2 },
    });
  });
});
