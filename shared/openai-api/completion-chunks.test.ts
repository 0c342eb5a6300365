// A turn's events as Chat Completions chunks and as one completion: what a client is shown, and what it is not.
import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../streaming/contracts.js';
import { chunksOf, completionOf, wireFinishReason, type CompletionMeta } from './completion-chunks.js';

const meta: CompletionMeta = {
  id: 'chatcmpl-s.m',
  model: 'gpt',
  created: 1,
  includeUsage: true,
  clientTools: ['get_weather'],
};
const base = { sessionId: 's', chatMessageId: 'm' };
const usage = { promptTokens: 7, completionTokens: 3, totalTokens: 10, cachedPromptTokens: 4 };

const events: ChatEvent[] = [
  { ...base, seq: 1, type: 'message-start', userMessageId: 'm_user', assistantMessageId: 'm_assistant' },
  { ...base, seq: 2, type: 'content', delta: 'Voided' },
  { ...base, seq: 3, type: 'discard', fromSeq: 2, toSeq: 2 },
  { ...base, seq: 4, type: 'content', delta: 'Let me look.' },
  { ...base, seq: 5, type: 'tool-call', round: 0, toolCallId: 'own', name: 'add_numbers', arguments: '{}' },
  {
    ...base,
    seq: 6,
    type: 'tool-call',
    round: 0,
    toolCallId: 'theirs',
    name: 'get_weather',
    arguments: '{"c":1}',
  },
  {
    ...base,
    seq: 7,
    type: 'tool-result',
    round: 0,
    toolCallId: 'own',
    name: 'add_numbers',
    result: '5',
    isError: false,
  },
  { ...base, seq: 8, type: 'message-end', finishReason: 'tool_calls', usage },
];

describe('a turn as chat completion chunks', () => {
  it('shows text, the client’s calls (indexed), the finish and the usage; never the turn’s own tools', () => {
    const counter = { calls: 0 };
    const chunks = events.flatMap((event) => chunksOf(meta, event, counter));
    const deltas = chunks.flatMap((chunk) => ('choices' in chunk ? chunk.choices.map((c) => c.delta) : []));
    expect(deltas[0]).toEqual({ role: 'assistant', content: '' });
    expect(deltas.flatMap((delta) => delta.tool_calls ?? [])).toEqual([
      { index: 0, id: 'theirs', type: 'function', function: { name: 'get_weather', arguments: '{"c":1}' } },
    ]);
    const last = chunks.at(-1);
    expect(last).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 7, total_tokens: 10, prompt_tokens_details: { cached_tokens: 4 } },
    });
    expect(chunks.at(-2)).toMatchObject({ choices: [{ finish_reason: 'tool_calls' }] });
  });

  it('sends no usage chunk unless asked', () => {
    const end = events.at(-1)!;
    expect(chunksOf({ ...meta, includeUsage: false }, end)).toHaveLength(1);
  });

  it('answers an error as OpenAI’s error object', () => {
    const [body] = chunksOf(meta, { ...base, seq: 2, type: 'error', code: 'llm_failed', message: 'down' });
    expect(body).toEqual({
      error: { message: 'down', type: 'server_error', code: 'llm_failed', param: null },
    });
  });
});

describe('a turn as one completion', () => {
  it('keeps only the text a discard left, with the client’s calls and the usage', () => {
    const completion = completionOf(meta, events);
    expect(completion.choices[0]?.message).toEqual({
      role: 'assistant',
      content: 'Let me look.',
      tool_calls: [
        { id: 'theirs', type: 'function', function: { name: 'get_weather', arguments: '{"c":1}' } },
      ],
    });
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.usage?.completion_tokens).toBe(3);
  });

  it('reads the turn’s own finish reasons as OpenAI’s', () => {
    expect(['stop', 'length', 'cancelled', 'tool_rounds_exhausted'].map(wireFinishReason)).toEqual([
      'stop',
      'length',
      'stop',
      'stop',
    ]);
  });
});
