// The Responses wire shapes the offline model emits, checked against what OpenAI sends (test/fixtures/llm-wire).
import { describe, expect, it } from 'vitest';
import { responseEvents, responseObject, tokenizeResponse, type ResponseMeta } from './response-events.js';
import { toChatCompletionRequest } from './responses-request.js';

const meta: ResponseMeta = {
  id: 'resp_x',
  createdAt: 1,
  model: 'm',
  promptTokens: 7,
  toolCallIds: ['call_a', 'call_b'],
  summarize: true,
};
const plan = {
  reasoning: 'Read. Plan.',
  reasoningParts: ['Read.', 'Plan.'],
  content: 'Hi there!',
  toolCalls: [],
};
type Event = Record<string, unknown> & { type: string };
const eventsOf = (response = tokenizeResponse(plan, meta), m = meta) =>
  responseEvents(response, m).map((event) => event.chunk as Event);

describe('responseEvents', () => {
  it('streams summary parts with their titles, then the text, numbering every event from 0', () => {
    const events = eventsOf();
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      ...['part.added', ...Array<string>(9).fill('text.delta'), 'text.done', 'part.done'].map(
        (t) => `response.reasoning_summary_${t}`,
      ),
      ...['part.added', ...Array<string>(9).fill('text.delta'), 'text.done', 'part.done'].map(
        (t) => `response.reasoning_summary_${t}`,
      ),
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const summaries = events.filter((event) => event.type === 'response.reasoning_summary_text.done');
    expect(summaries.map((event) => [event.summary_index, event.text])).toEqual([
      [0, '**Reading the message**\n\nRead.'],
      [1, '**Planning the answer**\n\nPlan.'],
    ]);
    const text = events.filter((event) => event.type === 'response.output_text.delta').map((e) => e.delta);
    expect(text).toEqual(['Hi', ' there', '!']);
    expect(events.at(-1)).toMatchObject({
      response: {
        status: 'completed',
        usage: {
          input_tokens: 7,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 21,
          output_tokens_details: { reasoning_tokens: 18 },
          total_tokens: 28,
        },
      },
    });
    // Nothing but the terminal event has usage; the created event has no output yet.
    expect(events[0]).toMatchObject({ response: { status: 'in_progress', output: [], usage: null } });
  });

  it('keeps the reasoning to itself unless a summary is asked for, yet counts its tokens', () => {
    const quiet = { ...meta, summarize: false };
    const events = eventsOf(tokenizeResponse(plan, quiet), quiet);
    expect(events.some((event) => event.type.startsWith('response.reasoning_summary'))).toBe(false);
    expect(events[2]).toMatchObject({
      type: 'response.output_item.added',
      item: { type: 'reasoning', summary: [] },
    });
    expect(events.at(-1)).toMatchObject({
      response: { usage: { output_tokens_details: { reasoning_tokens: 18 } } },
    });
  });

  it('adds one function call after another, arguments in fragments, the call id on the item only', () => {
    const calls = {
      reasoning: '',
      content: '',
      toolCalls: [
        { name: 'f', arguments: '{"a":1}' },
        { name: 'g', arguments: '{}' },
      ],
    };
    const events = eventsOf(tokenizeResponse(calls, meta));
    const items = events
      .filter((event) => event.type === 'response.output_item.added')
      .map((event) => event.item);
    expect(items).toEqual([
      {
        id: 'fc_x0',
        type: 'function_call',
        status: 'in_progress',
        arguments: '',
        call_id: 'call_a',
        name: 'f',
      },
      {
        id: 'fc_x1',
        type: 'function_call',
        status: 'in_progress',
        arguments: '',
        call_id: 'call_b',
        name: 'g',
      },
    ]);
    const deltas = events.filter((event) => event.type === 'response.function_call_arguments.delta');
    expect(deltas.map((event) => [event.item_id, event.output_index, event.delta])).toEqual([
      ['fc_x0', 0, '{"'],
      ['fc_x0', 0, 'a'],
      ['fc_x0', 0, '":'],
      ['fc_x0', 0, '1'],
      ['fc_x0', 0, '}'],
      ['fc_x1', 1, '{}'],
    ]);
    expect(deltas.every((event) => !('call_id' in event) && !('name' in event))).toBe(true);
  });

  it('ends incomplete at max_output_tokens, and the non-streamed response says the same', () => {
    const limited = { ...meta, summarize: false, maxOutputTokens: 2 };
    const response = tokenizeResponse({ reasoning: '', content: 'one two three', toolCalls: [] }, limited);
    const events = eventsOf(response, limited);
    expect(events.at(-1)).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
    expect(responseObject(response, limited)).toMatchObject({
      object: 'response',
      status: 'incomplete',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'one two' }] }],
    });
  });
});

describe('toChatCompletionRequest', () => {
  it('reads instructions, messages, function calls and their outputs as the chat rules expect', () => {
    expect(
      toChatCompletionRequest({
        model: 'm',
        instructions: 'be brief',
        input: [
          { role: 'developer', content: 'digest' },
          { role: 'user', content: [{ type: 'input_text', text: 'add_numbers 2 and 3' }] },
          { type: 'reasoning', id: 'rs_1', summary: [] },
          { role: 'assistant', content: 'Adding.' },
          { type: 'function_call', call_id: 'c1', name: 'add_numbers', arguments: '{"a":2,"b":3}' },
          { type: 'function_call', call_id: 'c2', name: 'multiply', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: '5' },
        ],
        tools: [{ type: 'function', name: 'add_numbers', parameters: { type: 'object' }, strict: false }],
        tool_choice: { type: 'function', name: 'add_numbers' },
        text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' } } },
        max_output_tokens: 20,
        stream: true,
      }),
    ).toEqual({
      model: 'm',
      stream: true,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'system', content: 'digest' },
        { role: 'user', content: 'add_numbers 2 and 3' },
        {
          role: 'assistant',
          content: 'Adding.',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'add_numbers', arguments: '{"a":2,"b":3}' } },
            { id: 'c2', type: 'function', function: { name: 'multiply', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '5' },
      ],
      tools: [{ type: 'function', function: { name: 'add_numbers', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'add_numbers' } },
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      max_completion_tokens: 20,
    });
    expect(toChatCompletionRequest({ model: 'm', input: [] })).toBeUndefined();
    expect(toChatCompletionRequest({ model: 'm', input: 'hi' })?.messages).toEqual([
      { role: 'user', content: 'hi' },
    ]);
  });
});
