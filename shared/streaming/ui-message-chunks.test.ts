// The event-to-chunk converter, checked chunk by chunk and through the AI SDK's own reader of the stream.
import { readUIMessageStream, type UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ChatEvent, ChatEventBody } from './contracts.js';
import { answerText } from './turn-transcript.js';
import {
  replayUiMessageChunks,
  SOURCE_METADATA_KEY,
  UiMessageChunker,
  uiFinishReason,
  type UiMessageChunk,
  type UiMessageMetadata,
} from './ui-message-chunks.js';

const ids = { sessionId: 's', chatMessageId: 'm' };
const events = (...bodies: ChatEventBody[]): ChatEvent[] =>
  bodies.map((body, i) => ({ ...body, ...ids, seq: i + 1 }));

const source = (chunkId: string) => ({
  chunkId,
  documentId: 'a'.repeat(32),
  title: `Doc ${chunkId}`,
  citation: `Doc ${chunkId}, p. 2`,
  excerpt: `excerpt of ${chunkId}`,
  score: 0.5,
  pages: [2],
});

/** A tool round, a retried answer round (its first attempt voided), then the end. */
const turn = events(
  { type: 'message-start', userMessageId: 'm_user', assistantMessageId: 'm_assistant' },
  { type: 'reasoning-delta', delta: 'look it up' },
  { type: 'reasoning-end' },
  {
    type: 'tool-call',
    round: 0,
    toolCallId: 'c1',
    name: 'search_knowledge_base',
    arguments: '{"query":"pay"}',
  },
  {
    type: 'tool-result',
    round: 0,
    toolCallId: 'c1',
    name: 'search_knowledge_base',
    result: '{"hits":1}',
    isError: false,
  },
  { type: 'sources', sources: [source('k1')] },
  { type: 'content', delta: 'Paid on the ' },
  { type: 'content', delta: 'las' },
  { type: 'discard', fromSeq: 7, toSeq: 8 },
  { type: 'content', delta: 'Paid on the first ' },
  { type: 'content', delta: 'of the month [1].' },
  {
    type: 'message-end',
    finishReason: 'stop',
    usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
  },
);

function liveChunks(all: readonly ChatEvent[]): UiMessageChunk[] {
  const chunker = new UiMessageChunker();
  return all.flatMap((event) => chunker.push(event));
}

/** The UI message the AI SDK's own reader assembles from the chunks. */
async function assembled(chunks: readonly UiMessageChunk[]): Promise<UIMessage<UiMessageMetadata>> {
  const stream = new ReadableStream<UiMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UIMessage<UiMessageMetadata> | undefined;
  for await (const message of readUIMessageStream<UIMessage<UiMessageMetadata>>({ stream })) last = message;
  if (!last) throw new Error('the reader produced no message');
  return last;
}

const textOf = (message: UIMessage) =>
  message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

describe('the UI message chunks of a turn', () => {
  it('open with start (the answer as message id) and a step, and close with metadata and finish', () => {
    const chunks = liveChunks(turn);
    expect(chunks.slice(0, 2)).toEqual([
      {
        type: 'start',
        messageId: 'm_assistant',
        messageMetadata: {
          sessionId: 's',
          chatMessageId: 'm',
          userMessageId: 'm_user',
          assistantMessageId: 'm_assistant',
        },
      },
      { type: 'start-step' },
    ]);
    expect(chunks.slice(-3)).toEqual([
      { type: 'finish-step' },
      {
        type: 'message-metadata',
        messageMetadata: { usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 } },
      },
      { type: 'finish', finishReason: 'stop', messageMetadata: { finishReason: 'stop' } },
    ]);
  });

  it('make one step per model round', () => {
    const types = liveChunks(turn).map((chunk) => chunk.type);
    expect(types.filter((type) => type === 'start-step')).toHaveLength(2);
    expect(types.filter((type) => type === 'finish-step')).toHaveLength(2);
    const secondStep = types.lastIndexOf('start-step');
    expect(types.indexOf('tool-output-available')).toBeLessThan(secondStep);
    expect(types.indexOf('source-document')).toBeGreaterThan(secondStep);
  });

  it('turn a live discard into reset-step, then stream the step again without what it voided', () => {
    const chunks = liveChunks(turn);
    const reset = chunks.findIndex((chunk) => chunk.type === 'reset-step');
    expect(reset).toBeGreaterThan(0);
    // The step's source is shown again (reset-step removed it); the voided text is not.
    expect(chunks[reset + 1]).toMatchObject({ type: 'source-document', sourceId: 'k1' });
    expect(chunks.slice(reset + 1)).not.toContainEqual(expect.objectContaining({ delta: 'las' }));
  });

  it('replay the stored events without the voided ones and with no reset-step', () => {
    const chunks = replayUiMessageChunks([...turn].reverse());
    expect(chunks.map((chunk) => chunk.type)).not.toContain('reset-step');
    expect(chunks).not.toContainEqual(expect.objectContaining({ delta: 'las' }));
    expect(chunks.at(-1)).toEqual({
      type: 'finish',
      finishReason: 'stop',
      messageMetadata: { finishReason: 'stop' },
    });
  });

  it.each([
    ['live', liveChunks],
    ['replayed', replayUiMessageChunks],
  ])(
    'read by the AI SDK (%s), show the committed answer once, with its tool, reasoning and source',
    async (_, convert) => {
      const message = await assembled(convert(turn));
      expect(message.id).toBe('m_assistant');
      expect(textOf(message)).toBe(answerText(turn));
      expect(textOf(message)).toBe('Paid on the first of the month [1].');
      const parts = message.parts;
      expect(parts.filter((part) => part.type === 'step-start')).toHaveLength(2);
      expect(parts).toContainEqual(
        expect.objectContaining({ type: 'reasoning', text: 'look it up', state: 'done' }),
      );
      expect(parts).toContainEqual(
        expect.objectContaining({
          type: 'dynamic-tool',
          toolName: 'search_knowledge_base',
          toolCallId: 'c1',
          state: 'output-available',
          input: { query: 'pay' },
          output: { hits: 1 },
        }),
      );
      const sources = parts.filter((part) => part.type === 'source-document');
      expect(sources).toEqual([
        expect.objectContaining({
          sourceId: 'k1',
          title: 'Doc k1',
          providerMetadata: {
            [SOURCE_METADATA_KEY]: {
              documentId: 'a'.repeat(32),
              citation: 'Doc k1, p. 2',
              excerpt: 'excerpt of k1',
              score: 0.5,
              pages: [2],
            },
          },
        }),
      ]);
      expect(message.metadata).toMatchObject({
        chatMessageId: 'm',
        finishReason: 'stop',
        usage: { totalTokens: 15 },
      });
    },
  );

  it('void reasoning and a tool call of a crashed attempt, live and replayed alike', async () => {
    const crashed = events(
      { type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' },
      { type: 'reasoning-delta', delta: 'first try' },
      { type: 'tool-call', round: 0, toolCallId: 'old', name: 'search', arguments: '{}' },
      { type: 'discard', fromSeq: 2, toSeq: 3 },
      { type: 'reasoning-delta', delta: 'second try' },
      { type: 'reasoning-end' },
      { type: 'content', delta: 'Answer.' },
      { type: 'message-end', finishReason: 'stop' },
    );
    for (const chunks of [liveChunks(crashed), replayUiMessageChunks(crashed)]) {
      const message = await assembled(chunks);
      expect(message.parts.map((part) => part.type)).toEqual(['step-start', 'reasoning', 'text']);
      expect(message.parts[1]).toMatchObject({ type: 'reasoning', text: 'second try' });
      expect(textOf(message)).toBe('Answer.');
    }
  });

  it('keep a stopped round’s text when only its announced tool calls are voided', async () => {
    const stopped = events(
      { type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' },
      { type: 'content', delta: 'Half an ans' },
      { type: 'tool-call', round: 0, toolCallId: 'c', name: 'search', arguments: '{}' },
      { type: 'discard', fromSeq: 3, toSeq: 3 },
      { type: 'message-end', finishReason: 'cancelled' },
    );
    const chunks = liveChunks(stopped);
    expect(chunks.map((chunk) => chunk.type)).toContain('reset-step');
    const message = await assembled(chunks);
    expect(textOf(message)).toBe('Half an ans');
    expect(message.parts.some((part) => part.type === 'dynamic-tool')).toBe(false);
    expect(chunks.at(-1)).toEqual({
      type: 'finish',
      finishReason: 'stop',
      messageMetadata: { finishReason: 'cancelled' },
    });
  });

  it('show a tool error and a source list that grows without repeating a source', async () => {
    const chunks = liveChunks(
      events(
        { type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' },
        { type: 'tool-call', round: 0, toolCallId: 'c1', name: 'search', arguments: 'not json' },
        {
          type: 'tool-result',
          round: 0,
          toolCallId: 'c1',
          name: 'search',
          result: 'timed out',
          isError: true,
        },
        { type: 'sources', sources: [source('k1')] },
        { type: 'tool-call', round: 1, toolCallId: 'c2', name: 'search', arguments: '{}' },
        {
          type: 'tool-result',
          round: 1,
          toolCallId: 'c2',
          name: 'search',
          result: 'plain text',
          isError: false,
        },
        { type: 'sources', sources: [source('k1'), source('k2')] },
        { type: 'content', delta: 'Done.' },
        { type: 'message-end', finishReason: 'stop' },
      ),
    );
    const message = await assembled(chunks);
    expect(message.parts).toContainEqual(
      expect.objectContaining({
        toolCallId: 'c1',
        state: 'output-error',
        errorText: 'timed out',
        input: 'not json',
      }),
    );
    expect(message.parts).toContainEqual(
      expect.objectContaining({ toolCallId: 'c2', state: 'output-available', output: 'plain text' }),
    );
    const sourceIds = message.parts.flatMap((part) =>
      part.type === 'source-document' ? [part.sourceId] : [],
    );
    expect(sourceIds).toEqual(['k1', 'k2']);
    expect(message.parts.filter((part) => part.type === 'step-start')).toHaveLength(3);
  });

  it('pass through what message-end carries beyond usage (its cost, say)', () => {
    const [start, end] = events(
      { type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' },
      { type: 'message-end', finishReason: 'length' },
    );
    if (!start || !end) throw new Error('two events expected');
    const withCost = { ...end, cost: { usd: 0.0012 } } as unknown as ChatEvent;
    const chunks = liveChunks([start, withCost]);
    expect(chunks).toContainEqual({ type: 'message-metadata', messageMetadata: { cost: { usd: 0.0012 } } });
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'length' });
  });

  it('end a failed turn with error then finish, its code in the metadata', () => {
    const chunks = liveChunks(
      events(
        { type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' },
        { type: 'content', delta: 'Par' },
        { type: 'error', code: 'llm_unavailable', message: 'The model did not answer.' },
        { type: 'content', delta: 'ignored' },
      ),
    );
    expect(chunks.slice(-4)).toEqual([
      { type: 'text-end', id: 'm-text-2' },
      { type: 'finish-step' },
      { type: 'error', errorText: 'The model did not answer.' },
      {
        type: 'finish',
        finishReason: 'error',
        messageMetadata: { finishReason: 'error', errorCode: 'llm_unavailable' },
      },
    ]);
  });

  it('ignore a redelivered event and start late when the first event seen is not message-start', () => {
    const chunker = new UiMessageChunker({ messageId: 'ui-id' });
    const [, content] = events(
      { type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' },
      { type: 'content', delta: 'Hi' },
    );
    if (!content) throw new Error('content expected');
    const first = chunker.push(content);
    expect(first.map((chunk) => chunk.type)).toEqual(['start', 'start-step', 'text-start', 'text-delta']);
    expect(first[0]).toMatchObject({ messageId: 'ui-id' });
    expect(chunker.push(content)).toEqual([]);
    expect(new UiMessageChunker().push(content)[0]).toMatchObject({ messageId: 'm_assistant' });
  });

  it('map finish reasons onto the AI SDK’s set', () => {
    expect(uiFinishReason('stop')).toBe('stop');
    expect(uiFinishReason('cancelled')).toBe('stop');
    expect(uiFinishReason('length')).toBe('length');
    expect(uiFinishReason('content_filter')).toBe('content-filter');
    expect(uiFinishReason('tool_calls')).toBe('tool-calls');
    expect(uiFinishReason('constructor')).toBe('other');
    expect(uiFinishReason('something new')).toBe('other');
  });

  it('pause at an approval request with finish, and go on as the same message ending the tool denied', () => {
    const asked = events(
      { type: 'message-start', userMessageId: 'm_user', assistantMessageId: 'm_assistant' },
      { type: 'tool-call', round: 0, toolCallId: 'c1', name: 'mcp__files__rm', arguments: '{"path":"a"}' },
      {
        type: 'tool-approval-request',
        round: 0,
        approvalId: '0-0',
        toolCallId: 'c1',
        toolName: 'mcp__files__rm',
        input: '{"path":"a"}',
      },
      {
        type: 'tool-result',
        round: 0,
        toolCallId: 'c1',
        name: 'mcp__files__rm',
        result: '{}',
        isError: true,
        denied: true,
      },
      { type: 'content', delta: 'Not deleted.' },
      { type: 'message-end', finishReason: 'stop' },
    );
    const first = new UiMessageChunker();
    const paused = [...asked.slice(0, 3).flatMap((event) => first.push(event)), ...first.pause()];
    expect(paused.map((chunk) => chunk.type)).toEqual([
      'start',
      'start-step',
      'tool-input-available',
      'tool-approval-request',
      'finish-step',
      'finish',
    ]);
    expect(paused[3]).toEqual({ type: 'tool-approval-request', approvalId: '0-0', toolCallId: 'c1' });
    expect(first.finished).toBe(true);

    const next = new UiMessageChunker();
    const continued = asked.slice(3).flatMap((event) => next.push(event));
    expect(continued[0]).toMatchObject({ type: 'start', messageId: 'm_assistant' });
    expect(continued).toContainEqual({ type: 'tool-output-denied', toolCallId: 'c1' });
    expect(continued.some((chunk) => chunk.type === 'tool-output-error')).toBe(false);
    expect(continued.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
  });
});

describe('a tool whose MCP server needs the user to connect', () => {
  it('ends the tool with its error and adds a data-mcp-connect part the page turns into Connect', async () => {
    const chunker = new UiMessageChunker();
    const chunks = events(
      { type: 'message-start', userMessageId: 'm_user', assistantMessageId: 'm_assistant' },
      { type: 'tool-call', round: 0, toolCallId: 'c1', name: 'mcp__notes__get_note', arguments: '{}' },
      {
        type: 'tool-result',
        round: 0,
        toolCallId: 'c1',
        name: 'mcp__notes__get_note',
        result: '{"error":"connect first"}',
        isError: true,
        connect: { serverId: 'mcp-0123456789abcdef', serverName: 'notes' },
      },
      { type: 'content', delta: 'Please connect notes.' },
      { type: 'message-end', finishReason: 'stop' },
    ).flatMap((event) => chunker.push(event));
    const message = await assembled(chunks);
    expect(message.parts.map((part) => part.type)).toEqual([
      'step-start',
      'dynamic-tool',
      'data-mcp-connect',
      'step-start',
      'text',
    ]);
    expect(message.parts.find((part) => part.type === 'data-mcp-connect')).toMatchObject({
      data: { serverId: 'mcp-0123456789abcdef', serverName: 'notes' },
    });
  });
});
