// Edge cases of Responses event assembly that the recorded streams do not contain (the replay tests cover those).
import { describe, expect, it } from 'vitest';
import { ResponsesStreamAssembler } from './responses-stream-assembler.js';

const completed = (extra: Record<string, unknown> = {}) => ({
  type: 'response.completed',
  response: { status: 'completed', model: 'm', output: [], usage: null, ...extra },
});
const call = (id: string, callId: string, name: string, args = '') => ({
  type: 'function_call',
  id,
  call_id: callId,
  name,
  arguments: args,
  status: 'in_progress',
});

describe('ResponsesStreamAssembler', () => {
  it('keys argument deltas by item_id even when two calls interleave', () => {
    const assembler = new ResponsesStreamAssembler();
    const deltas = [
      { type: 'response.output_item.added', output_index: 1, item: call('fc_a', 'call_a', 'add') },
      { type: 'response.output_item.added', output_index: 2, item: call('fc_b', 'call_b', 'multiply') },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_b', output_index: 2, delta: '{"b"' },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_a', output_index: 1, delta: '{"a"' },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_a', output_index: 1, delta: ':1}' },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_b', output_index: 2, delta: ':2}' },
      // The done events repeat the arguments: a check, never added again.
      { type: 'response.function_call_arguments.done', item_id: 'fc_a', arguments: '{"a":1}' },
      { type: 'response.output_item.done', item: { ...call('fc_a', 'call_a', 'add', '{"a":1}') } },
      completed(),
    ].flatMap((event) => assembler.push(event));
    expect(deltas).toEqual([
      { type: 'tool-call', index: 0, id: 'call_a', name: 'add' },
      { type: 'tool-call', index: 1, id: 'call_b', name: 'multiply' },
    ]);
    expect(assembler.result()).toMatchObject({
      toolCalls: [
        { id: 'call_a', name: 'add', arguments: '{"a":1}' },
        { id: 'call_b', name: 'multiply', arguments: '{"b":2}' },
      ],
      finishReason: 'tool_calls',
    });
    expect(assembler.toolCallItemIds).toEqual(['fc_a', 'fc_b']);
  });

  it('takes whole items from .done events and the terminal output when a server streams no deltas, once', () => {
    const assembler = new ResponsesStreamAssembler();
    const message = {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      content: [
        { type: 'output_text', text: 'Hello', annotations: [] },
        { type: 'output_text', text: ' there', annotations: [] },
      ],
    };
    const reasoning = {
      type: 'reasoning',
      id: 'rs_1',
      summary: [
        { type: 'summary_text', text: '**One**' },
        { type: 'summary_text', text: '**Two**' },
      ],
    };
    const deltas = [
      { type: 'response.output_item.done', item: reasoning },
      { type: 'response.output_item.done', item: message },
      { type: 'response.output_item.added', item: call('fc_1', 'call_1', 'f') },
      { type: 'response.function_call_arguments.done', item_id: 'fc_1', arguments: '{"x":1}' },
      // The terminal event lists every item again, and one (a call) it alone carries.
      completed({
        output: [reasoning, message, call('fc_1', 'call_1', 'f', '{"x":1}'), call('fc_2', 'call_2', 'g')],
      }),
    ].flatMap((event) => assembler.push(event));
    expect(deltas).toEqual([
      { type: 'reasoning', text: '**One**' },
      { type: 'reasoning-end' },
      { type: 'reasoning', text: '**Two**' },
      { type: 'reasoning-end' },
      { type: 'content', text: 'Hello there' },
      { type: 'tool-call', index: 0, id: 'call_1', name: 'f' },
      { type: 'tool-call', index: 1, id: 'call_2', name: 'g' },
    ]);
    expect(assembler.result()).toMatchObject({
      content: 'Hello there',
      reasoning: '**One****Two**',
      reasoningParts: ['**One**', '**Two**'],
      toolCalls: [
        { id: 'call_1', name: 'f', arguments: '{"x":1}' },
        { id: 'call_2', name: 'g', arguments: '{}' },
      ],
    });
  });

  it('closes each summary part once, and parts never closed at the end of the response', () => {
    const assembler = new ResponsesStreamAssembler();
    const part = (summary_index: number, type: string, extra: Record<string, unknown> = {}) => ({
      type,
      item_id: 'rs_1',
      summary_index,
      ...extra,
    });
    const deltas = [
      part(0, 'response.reasoning_summary_part.added', { part: { type: 'summary_text', text: '' } }),
      part(0, 'response.reasoning_summary_text.delta', { delta: 'a' }),
      part(0, 'response.reasoning_summary_text.done', { text: 'a' }),
      part(0, 'response.reasoning_summary_part.done', { part: { type: 'summary_text', text: 'a' } }),
      part(1, 'response.reasoning_summary_text.delta', { delta: 'b' }),
      // Open-weight models' servers stream raw reasoning text instead (content_index, not summary_index).
      { type: 'response.reasoning_text.delta', item_id: 'rs_2', content_index: 0, delta: 'c' },
      completed(),
    ].flatMap((event) => assembler.push(event));
    expect(deltas).toEqual([
      { type: 'reasoning', text: 'a' },
      { type: 'reasoning-end' },
      { type: 'reasoning', text: 'b' },
      { type: 'reasoning', text: 'c' },
      { type: 'reasoning-end' },
      { type: 'reasoning-end' },
    ]);
    expect(assembler.result()).toMatchObject({ reasoning: 'abc', reasoningParts: ['a', 'b', 'c'] });
  });

  it('keeps the top-level error shape too, reads on, and lets response.failed end the response', () => {
    const assembler = new ResponsesStreamAssembler();
    assembler.push({ type: 'response.output_text.delta', item_id: 'msg_1', delta: 'Par' });
    assembler.push({ type: 'error', code: 'server_error', message: 'The server had an error.', param: null });
    expect(assembler.finished).toBe(false);
    assembler.push({
      type: 'response.failed',
      response: { status: 'failed', error: { code: 'server_error', message: 'later words' }, usage: null },
    });
    expect(assembler.status).toBe('failed');
    expect(assembler.failure).toEqual({ code: 'server_error', message: 'The server had an error.' });
    expect(assembler.result()).toMatchObject({ content: 'Par', finishReason: 'error' });

    const quiet = new ResponsesStreamAssembler();
    quiet.push({ type: 'response.failed', response: { status: 'failed', error: null } });
    expect(quiet.failure?.message).toMatch(/failed without saying why/);
  });

  it('ends an incomplete response with length (max tokens) or the reason given, with its usage', () => {
    const cut = new ResponsesStreamAssembler();
    cut.push({ type: 'response.output_text.delta', item_id: 'msg_1', delta: 'One two' });
    cut.push({
      type: 'response.incomplete',
      response: {
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        usage: { input_tokens: 5, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 } },
      },
    });
    expect(cut.result()).toMatchObject({
      content: 'One two',
      finishReason: 'length',
      usage: { promptTokens: 5, completionTokens: 2, totalTokens: 7, reasoningTokens: 0 },
    });
    expect(cut.result().usage?.cachedPromptTokens).toBeUndefined();

    const filtered = new ResponsesStreamAssembler();
    filtered.push({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'content_filter' } },
    });
    expect(filtered.result().finishReason).toBe('content_filter');
  });

  it('without a terminal event the response is not finished; the caller may mark it cancelled', () => {
    const assembler = new ResponsesStreamAssembler();
    expect(assembler.push(null)).toEqual([]);
    expect(assembler.push({ type: 'response.unknown_event', delta: 'x' })).toEqual([]);
    assembler.push({ type: 'response.created', response: { model: 'gpt-x', usage: null } });
    assembler.push({
      type: 'response.output_text.delta',
      item_id: 'msg_1',
      delta: 'So far',
      obfuscation: 'padding',
    });
    expect(assembler.finished).toBe(false);
    expect(assembler.result()).toMatchObject({ content: 'So far', finishReason: 'unknown', model: 'gpt-x' });
    expect(assembler.result('cancelled').finishReason).toBe('cancelled');
  });
});
