// SSE framing checked by a real EventSource parser, and the Last-Event-ID rules.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import type { ChatEvent } from './contracts.js';
import { ValidationError } from '../errors.js';
import {
  SSE_HEADERS,
  SSE_TURN_ERROR_EVENT,
  formatSseComment,
  formatSseEvent,
  formatSseRetry,
  parseLastEventId,
} from './sse.js';

function parse(text: string): { events: EventSourceMessage[]; comments: string[]; retries: number[] } {
  const result = { events: [] as EventSourceMessage[], comments: [] as string[], retries: [] as number[] };
  const parser = createParser({
    onEvent: (event) => result.events.push(event),
    onComment: (comment) => result.comments.push(comment),
    onRetry: (retry) => result.retries.push(retry),
  });
  parser.feed(text);
  return result;
}

describe('formatSseEvent', () => {
  it('frames an event with its seq as id, its type as event name and the JSON on one data line', () => {
    const event: ChatEvent = {
      type: 'content',
      sessionId: 's1',
      chatMessageId: 'm1',
      seq: 7,
      delta: 'line one\nline two\r\n\u2028 "quoted"',
    };
    const frame = formatSseEvent(event);

    expect(frame).toBe(`id: 7\nevent: content\ndata: ${JSON.stringify(event)}\n\n`);
    expect(frame.split('\n')).toHaveLength(5);
    const parsed = parse(frame).events;
    expect(parsed).toEqual([{ id: '7', event: 'content', data: JSON.stringify(event) }]);
    expect(JSON.parse(parsed[0]!.data)).toEqual(event);
  });

  it("sends a turn's error as turn-error, never EventSource's own error event, and keeps its type in the data", () => {
    const event: ChatEvent = {
      type: 'error',
      sessionId: 's1',
      chatMessageId: 'm1',
      seq: 3,
      code: 'llm_failed',
      message: 'The model failed.',
    };
    const parsed = parse(formatSseEvent(event)).events;
    expect(SSE_TURN_ERROR_EVENT).toBe('turn-error');
    expect(parsed).toEqual([{ id: '3', event: 'turn-error', data: JSON.stringify(event) }]);
    expect(JSON.parse(parsed[0]!.data)).toMatchObject({ type: 'error' });
  });
});

describe('formatSseComment and formatSseRetry', () => {
  it('writes a comment a parser reports as one comment, even when the text has line breaks', () => {
    expect(formatSseComment('keep-alive')).toBe(': keep-alive\n\n');
    const parsed = parse(formatSseComment('first\r\nsecond\nthird') + formatSseRetry(1500));
    expect(parsed.comments.map((c) => c.trim())).toEqual(['first second third']);
    expect(parsed.events).toEqual([]);
    expect(parsed.retries).toEqual([1500]);
  });
});

describe('parseLastEventId', () => {
  it('is 0 without a header or query parameter, or with empty ones', () => {
    expect(parseLastEventId(null, null)).toBe(0);
    expect(parseLastEventId('', ' ')).toBe(0);
  });

  it('reads a non-negative integer from the header, else from the query parameter', () => {
    expect(parseLastEventId('12', null)).toBe(12);
    expect(parseLastEventId(null, '5')).toBe(5);
    expect(parseLastEventId('0', '9')).toBe(0);
    expect(parseLastEventId(' 3 ', null)).toBe(3);
  });

  it.each([
    ['-1', null, 'Last-Event-ID'],
    ['1.5', null, 'Last-Event-ID'],
    ['abc', '4', 'Last-Event-ID'],
    ['1e3', null, 'Last-Event-ID'],
    ['99999999999999999999', null, 'Last-Event-ID'],
    [null, 'x', 'lastEventId'],
  ])('refuses header %j / query %j with a ValidationError naming %s', (header, query, source) => {
    let error: unknown;
    try {
      parseLastEventId(header, query);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toMatch(
      new RegExp(`^${source} must be a non-negative integer`),
    );
    expect((error as ValidationError).issues[0]?.path).toBe(source);
  });
});

describe('SSE_HEADERS', () => {
  it('declares an uncached, unbuffered UTF-8 event stream without HTTP/1-only connection headers', () => {
    expect(SSE_HEADERS).toEqual({
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    expect(Object.keys(SSE_HEADERS)).not.toContain('connection');
  });
});
