// A conversation reloaded from history shows what the stream showed: its source parts carry the provider metadata
// the chunk mapper gives the streamed answer's sources.
import { describe, expect, it } from 'vitest';
import type { ChatEvent, ChatEventBody } from '../../../shared/streaming/contracts.js';
import { replayUiMessageChunks } from '../../../shared/streaming/ui-message-chunks.js';
import {
  citationLabel,
  fromHistory,
  keepShown,
  withPending,
  type ChatUIMessage,
  type StoredSource,
} from './messages';
import { attachmentIdOf } from './attachments';
import { connectNeededResult } from '../../../shared/streaming/tool-connect.js';

const source: StoredSource = {
  chunkId: 'k1',
  documentId: 'a'.repeat(32),
  title: 'Handbook',
  heading: 'Pay',
  pages: [2, 3],
  citation: 'Handbook, pp. 2-3',
  excerpt: 'Salaries are paid on the first of the month.',
  score: 0.8,
};

describe('a conversation reloaded from history', () => {
  it('gives a source the same part the stream gave it', () => {
    const bodies: ChatEventBody[] = [
      { type: 'message-start', userMessageId: 'm_user', assistantMessageId: 'm_assistant' },
      { type: 'sources', sources: [source] },
      { type: 'content', delta: 'On the first [1].' },
      { type: 'message-end', finishReason: 'stop' },
    ];
    const events = bodies.map((body, i): ChatEvent => ({
      ...body,
      sessionId: 's',
      chatMessageId: 'm',
      seq: i + 1,
    }));
    const streamed = replayUiMessageChunks(events).find((chunk) => chunk.type === 'source-document');

    const [reloaded] = fromHistory([
      {
        messageId: 'm_assistant',
        chatMessageId: 'm',
        role: 'assistant',
        content: 'On the first [1].',
        timestamp: '2026-11-22T10:00:00.000Z',
        sources: [source],
      },
    ]);
    const part = reloaded?.parts.find((candidate) => candidate.type === 'source-document');

    expect(streamed).toBeDefined();
    expect(part).toEqual(streamed);
  });

  it('shows the Connect part of a stored call whose MCP server the user must connect, as the stream showed it', () => {
    const connect = { serverId: 'mcp-0123456789abcdef', serverName: 'notes' };
    const result = connectNeededResult('Tool mcp__notes__get_note was not run: connect first.', connect);
    const bodies: ChatEventBody[] = [
      { type: 'message-start', userMessageId: 'm_user', assistantMessageId: 'm_assistant' },
      { type: 'tool-call', round: 0, toolCallId: 'c1', name: 'mcp__notes__get_note', arguments: '{}' },
      {
        type: 'tool-result',
        round: 0,
        toolCallId: 'c1',
        name: 'mcp__notes__get_note',
        result,
        isError: true,
        connect,
      },
      { type: 'content', delta: 'Connect the notes server first.' },
      { type: 'message-end', finishReason: 'stop' },
    ];
    const events = bodies.map((body, i): ChatEvent => ({
      ...body,
      sessionId: 's',
      chatMessageId: 'm',
      seq: i + 1,
    }));
    const streamed = replayUiMessageChunks(events).filter((chunk) => chunk.type === 'data-mcp-connect');

    const stored = { id: 'c1', name: 'mcp__notes__get_note', arguments: '{}', result, isError: true };
    const [reloaded] = fromHistory([
      {
        messageId: 'm_assistant',
        chatMessageId: 'm',
        role: 'assistant',
        content: 'Connect the notes server first.',
        timestamp: '2026-11-22T10:00:00.000Z',
        toolCalls: [stored, { ...stored, id: 'c2', result: JSON.stringify({ error: 'the server failed' }) }],
      },
    ]);
    const parts = reloaded?.parts.filter((part) => part.type === 'data-mcp-connect');

    expect(streamed).toEqual([{ type: 'data-mcp-connect', data: connect }]);
    // Only the call that needed the connection gets one, right after its tool part.
    expect(parts).toEqual(streamed);
    expect(reloaded?.parts.map((part) => part.type)).toEqual([
      'dynamic-tool',
      'data-mcp-connect',
      'dynamic-tool',
      'text',
    ]);
  });

  it("turns a user message's stored files into file parts that name them, never a signed URL", () => {
    const [question] = fromHistory([
      {
        messageId: 'm_user',
        chatMessageId: 'm',
        role: 'user',
        content: 'What is this?',
        timestamp: '2026-11-22T10:00:00.000Z',
        attachments: [
          { id: 'att_1', name: 'chart.png', mediaType: 'image/png', size: 2_048, width: 64, height: 48 },
          { id: 'att 2', name: 'notes.md', mediaType: 'text/markdown', size: 12 },
        ],
      },
    ]);
    const files = question?.parts.filter((part) => part.type === 'file') ?? [];
    expect(files).toEqual([
      { type: 'file', mediaType: 'image/png', filename: 'chart.png', url: '/api/attachments/att_1' },
      { type: 'file', mediaType: 'text/markdown', filename: 'notes.md', url: '/api/attachments/att%202' },
    ]);
    expect(files.map((part) => attachmentIdOf(part.url))).toEqual(['att_1', 'att 2']);
    expect(question?.parts.at(-1)).toEqual({ type: 'text', text: 'What is this?' });
  });

  it('shows the reasoning with its time before the answer, and the "Not remembered" mark', () => {
    const [question, answer] = fromHistory([
      {
        messageId: 'm_user',
        chatMessageId: 'm',
        role: 'user',
        content: 'Think first',
        timestamp: '2026-11-22T10:00:00.000Z',
        useMemory: false,
      },
      {
        messageId: 'm_assistant',
        chatMessageId: 'm',
        role: 'assistant',
        content: 'Done.',
        timestamp: '2026-11-22T10:00:04.000Z',
        reasoning: { text: 'Plan it.', durationMs: 3_400 },
        useMemory: false,
      },
    ]);
    expect(question?.metadata?.useMemory).toBe(false);
    expect(answer?.parts[0]).toEqual({ type: 'reasoning', text: 'Plan it.', state: 'done' });
    expect(answer?.metadata?.reasoningMs).toBe(3_400);
    const [plain] = fromHistory([answerOf('m')]);
    expect(plain?.parts.map((p) => p.type)).toEqual(['text']);
  });
});

function answerOf(chatMessageId: string) {
  return {
    messageId: `${chatMessageId}_assistant`,
    chatMessageId,
    role: 'assistant' as const,
    content: 'Plain.',
    timestamp: '2026-11-22T10:00:00.000Z',
  };
}

describe('a source chip', () => {
  it('names the document once', () => {
    expect(citationLabel('handbook', 'handbook › Parental leave')).toBe('handbook › Parental leave');
    expect(citationLabel('Handbook', 'Handbook, pp. 2-3')).toBe('Handbook, pp. 2-3');
    expect(citationLabel('handbook', 'Parental leave')).toBe('handbook › Parental leave');
    expect(citationLabel('handbook', undefined)).toBe('handbook');
  });
});

describe('a conversation read back while the page shows it', () => {
  const question: ChatUIMessage = {
    id: 'turn-1',
    role: 'user',
    metadata: { chatMessageId: 'turn-1' },
    parts: [{ type: 'text', text: 'Hi' }],
  };
  const answer: ChatUIMessage = {
    id: 'turn-1_assistant',
    role: 'assistant',
    metadata: { chatMessageId: 'turn-1' },
    parts: [{ type: 'text', text: 'Hello', state: 'done' }],
  };

  it('keeps the reasoning and the "Not remembered" mark that history does not return', () => {
    const shownQuestion = { ...question, metadata: { ...question.metadata, useMemory: false } };
    const shownAnswer: ChatUIMessage = {
      ...answer,
      parts: [{ type: 'reasoning', text: 'Thinking', state: 'done' }, ...answer.parts],
    };
    const kept = keepShown([question, answer], [shownQuestion, shownAnswer]);
    expect(kept[0]?.metadata?.useMemory).toBe(false);
    expect(kept[1]?.parts.map((part) => part.type)).toEqual(['reasoning', 'text']);
    // Nothing is added to messages the page did not show.
    expect(keepShown([question, answer], [])).toEqual([question, answer]);
  });

  it('shows a question sent but not stored yet after the stored messages, once', () => {
    expect(withPending([], question)).toEqual([question]);
    expect(withPending([question, answer], question)).toEqual([question, answer]);
    expect(withPending([answer], undefined)).toEqual([answer]);
  });
});
