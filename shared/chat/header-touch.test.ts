// What a commit tells the conversation's header, read off working memory.
import { describe, expect, it } from 'vitest';
import { PREVIEW_CHARS } from '../history/contracts.js';
import type { ConversationMessage } from '../conversation/messages.js';
import { headerTouch } from './header-touch.js';
import { preview } from '../history/header-preview.js';

const ref = { userId: 'user-1', sessionId: 'session-1', chatMessageId: 'c2' };

function message(
  chatMessageId: string,
  role: 'user' | 'assistant',
  content: string,
  ordinal: number,
): ConversationMessage {
  return {
    messageId: `${chatMessageId}_${role}`,
    chatMessageId,
    role,
    content,
    timestamp: `2025-01-01T00:00:0${ordinal}.000Z`,
    ordinal,
  };
}

describe('headerTouch', () => {
  it('takes the dates, count, preview and first question from working memory', () => {
    const messages = [
      message('c1', 'user', 'First question', 0),
      message('c1', 'assistant', 'First answer', 1),
      message('c2', 'user', 'Second question', 2),
      message('c2', 'assistant', 'Second\n\nanswer', 3),
    ];
    expect(headerTouch(ref, { ...ref, messages, messageCount: 4 })).toEqual({
      userId: 'user-1',
      sessionId: 'session-1',
      createdAt: '2025-01-01T00:00:00.000Z',
      lastActivity: '2025-01-01T00:00:03.000Z',
      messageCount: 4,
      preview: 'Second answer',
      firstUserText: 'First question',
      // The ref's turn is not the one that opened the conversation: its header is patched.
      opensConversation: false,
      // A window written before branches: its newest turn ends the main line, which skips nothing.
      path: {
        leafChatMessageId: 'c2',
        branch: { parentChatMessageId: 'c1', branchId: 'main', gaps: [] },
        lastOrdinal: 3,
      },
    });
  });

  it('prefers the stored start date, and the oldest question in the window once the first has left it', () => {
    const messages = [message('c9', 'user', 'Later question', 18), message('c9', 'assistant', '', 19)];
    const touch = headerTouch(ref, {
      ...ref,
      messages,
      messageCount: 20,
      createdAt: '2024-12-31T00:00:00.000Z',
    });
    expect(touch).toMatchObject({
      createdAt: '2024-12-31T00:00:00.000Z',
      messageCount: 20,
      // The answer has no text (tool calls only): the preview is of the newest message with text.
      preview: 'Later question',
      firstUserText: 'Later question',
    });
  });

  it('gives nothing for an empty working memory', () => {
    expect(headerTouch(ref, { ...ref, messages: [], messageCount: 0 })).toBeUndefined();
  });
});

describe('preview', () => {
  it(`cuts to ${PREVIEW_CHARS} characters on one line, never inside a character`, () => {
    expect(preview('  a\n b\t c  ')).toBe('a b c');
    const emoji = '😀'.repeat(PREVIEW_CHARS + 10);
    expect(Array.from(preview(emoji))).toHaveLength(PREVIEW_CHARS);
    expect(preview(emoji)).toBe('😀'.repeat(PREVIEW_CHARS));
  });
});
