// A request's messages as a turn takes them: the text, the context before it, and the tool round trip after it.
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { assertResultsAnswerCalls, splitMessages } from './completion-messages.js';
import { inputMessages, responseIdOf, turnOfResponse } from './responses.js';
import { keyedSessionId, turnMessageId } from './request-ids.js';
import { isId } from '../ids.js';

describe('the messages of a request', () => {
  it('takes the last user message as the text and the rest, as given, as context and follow-up', () => {
    const split = splitMessages([
      { role: 'developer', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather ' },
          { type: 'text', text: 'in Paris?' },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'w', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c', content: 'sunny' },
    ]);
    expect(split).toEqual({
      text: 'Weather in Paris?',
      context: [{ role: 'system', content: 'Be brief.' }],
      followUp: [
        { role: 'assistant', content: '', tool_calls: [{ id: 'c', name: 'w', arguments: '{}' }] },
        { role: 'tool', tool_call_id: 'c', content: 'sunny' },
      ],
    });
  });

  it('refuses a list without a user message, or one that ends with something else after it', () => {
    expect(() => splitMessages([{ role: 'system', content: 'x' }])).toThrow(ValidationError);
    expect(() =>
      splitMessages([
        { role: 'user', content: 'hi' },
        { role: 'system', content: 'late' },
      ]),
    ).toThrow(/followed only by tool calls/);
    expect(() => splitMessages([{ role: 'user', content: ' ' }])).toThrow(/no text/);
  });

  it('refuses a tool result that answers no earlier call, or one answered already', () => {
    const call = {
      role: 'assistant' as const,
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function' as const, function: { name: 'lookup', arguments: '{}' } },
      ],
    };
    const result = { role: 'tool' as const, tool_call_id: 'call_1', content: 'found' };
    expect(() => assertResultsAnswerCalls([{ role: 'user', content: 'hi' }, call, result])).not.toThrow();
    expect(() =>
      assertResultsAnswerCalls([
        { role: 'user', content: 'hi' },
        { ...result, tool_call_id: 'call_9' },
      ]),
    ).toThrow(/answers no call/);
    expect(() => assertResultsAnswerCalls([{ role: 'user', content: 'hi' }, call, result, result])).toThrow(
      /answers no call/,
    );
  });

  it('reads Responses input items as the same messages', () => {
    expect(
      inputMessages({
        instructions: 'Be brief.',
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'Weather?' }] },
          { type: 'function_call', call_id: 'a', name: 'w', arguments: '{}' },
          { type: 'function_call', call_id: 'b', name: 'w', arguments: '{"x":1}' },
          { type: 'function_call_output', call_id: 'a', output: 'sunny' },
        ],
      }),
    ).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'w', arguments: '{}' } },
          { id: 'b', type: 'function', function: { name: 'w', arguments: '{"x":1}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'sunny' },
    ]);
  });
});

describe('the ids of a request', () => {
  it('derives the same session and message from the same caller and key, and others from others', () => {
    const session = keyedSessionId('user_001', 'key-1');
    expect(isId('sessionId', session)).toBe(true);
    expect(keyedSessionId('user_001', 'key-1')).toBe(session);
    expect(keyedSessionId('user_002', 'key-1')).not.toBe(session);
    const message = turnMessageId(session, 'key-1');
    expect(isId('chatMessageId', message)).toBe(true);
    expect(turnMessageId(session, 'key-1')).toBe(message);
    expect(turnMessageId(session, undefined)).not.toBe(turnMessageId(session, undefined));
  });

  it('names a turn by its response id, and finds no turn in anything else', () => {
    const turn = { sessionId: keyedSessionId('user_001', 'k'), chatMessageId: turnMessageId('s', 'k') };
    expect(turnOfResponse(responseIdOf(turn))).toEqual(turn);
    for (const id of [
      'resp_',
      'resp_a.b',
      `chatcmpl-${turn.sessionId}.${turn.chatMessageId}`,
      `${responseIdOf(turn)}.x`,
    ])
      expect(() => turnOfResponse(id)).toThrow(/previous_response_id/);
  });
});
