// What a turn's commit tells the conversation's header (history's contract), read off working memory as the
// commit left it, so the list and the conversation show the turn as soon as its stream ends. Pure.
import type { HeaderTouch } from '../history/conversation-headers.js';
import { preview } from '../history/header-preview.js';
import { activeLeaf, pathOf } from '../conversation/active-path.js';
import type { ConversationMessage, TurnRef } from '../conversation/messages.js';
import type { WorkingMemory } from '../conversation/working-memory-store.js';

/** The touch after a commit; undefined when working memory holds no message (nothing was committed). */
export function headerTouch(ref: TurnRef, memory: WorkingMemory): HeaderTouch | undefined {
  const { messages } = memory;
  const first = messages[0];
  const newest = messages.at(-1);
  if (first === undefined || newest === undefined) return undefined;
  // The preview is of the newest message with text (an answer made only of tool calls has none).
  const shown = messages.findLast((message) => message.content.trim() !== '') ?? newest;
  // The title of a header created now. The first user message is in the window while the conversation is short,
  // which is when its header is created; later the header exists and ignores this.
  const firstUser =
    messages.find((message) => message.role === 'user' && message.ordinal === 0) ??
    messages.find((message) => message.role === 'user');
  return {
    userId: ref.userId,
    sessionId: ref.sessionId,
    createdAt: memory.createdAt ?? first.timestamp,
    lastActivity: newest.timestamp,
    messageCount: Math.max(memory.messageCount, messages.length),
    preview: preview(shown.content),
    firstUserText: firstUser?.content ?? '',
    opensConversation: opensConversation(ref, messages),
    ...pathFields(memory),
  };
}

/** The active path after the commit (the committed turn, usually), and whether a fork made it. */
function pathFields(memory: WorkingMemory): Pick<HeaderTouch, 'path' | 'branched'> {
  const leaf = activeLeaf(memory);
  if (leaf === undefined) return {};
  return {
    path: pathOf(leaf),
    ...(leaf.branch.alternativeOf !== undefined ? { branched: true } : {}),
  };
}

/** Whether the turn's messages (among `messages`) are the conversation's first: one of them has ordinal 0. */
export function opensConversation(
  ref: Pick<TurnRef, 'chatMessageId'>,
  messages: readonly ConversationMessage[],
) {
  return messages.some((message) => message.chatMessageId === ref.chatMessageId && message.ordinal === 0);
}
