// The alternatives of each turn at a branch point on a page: the turn that was replaced first (the group) and
// every edit or regenerate of it, oldest first, so a client can offer to switch between them.
import type { ConversationMessage } from '../conversation/messages.js';
import type { WorkingMemory } from '../conversation/working-memory-store.js';
import type { ConversationHeader, HistoryMessage, TurnAlternatives } from './contracts.js';
import type { ConversationMessages } from './conversation-messages.js';

/**
 * The page's messages, each turn at a branch point with its alternatives. One query for the page's groups
 * (long-term history), plus what working memory holds that history has not stored yet; none at all for a
 * conversation never forked.
 */
export async function withAlternatives(
  messages: ConversationMessages,
  header: ConversationHeader,
  memory: WorkingMemory | undefined,
  page: HistoryMessage[],
): Promise<HistoryMessage[]> {
  const pending = [...(memory?.messages ?? []), ...(memory?.offPath ?? [])].filter(
    (message) => message.ordinal !== undefined && message.ordinal >= header.persistedCount,
  );
  const forked = header.branched === true || pending.some((message) => message.branch?.alternativeOf);
  if (!forked || page.length === 0) return page;
  const groupOf = (message: ConversationMessage) => message.branch?.alternativeOf ?? message.chatMessageId;
  const groups = [...new Set(page.map(groupOf))];
  const stored = await messages.alternatives(header.userId, header.sessionId, groups);
  const members = new Map<string, Map<string, number>>();
  const add = (group: string, chatMessageId: string, ordinal: number) => {
    const known = members.get(group) ?? new Map<string, number>();
    members.set(group, known);
    if (!known.has(chatMessageId)) known.set(chatMessageId, ordinal);
  };
  for (const alternative of stored)
    add(alternative.alternativeOf, alternative.chatMessageId, alternative.ordinal);
  for (const message of pending) {
    const group = message.branch?.alternativeOf;
    if (group !== undefined && groups.includes(group) && message.role === 'user')
      add(group, message.chatMessageId, message.ordinal!);
  }
  return page.map((message) => {
    const group = groupOf(message);
    const alternatives = members.get(group);
    if (alternatives === undefined) return message;
    // The group's first turn is the oldest of them all: the others replaced it later.
    const chatMessageIds = [
      group,
      ...[...alternatives.entries()].sort((a, b) => a[1] - b[1]).map(([id]) => id),
    ];
    const shown: TurnAlternatives = {
      index: chatMessageIds.indexOf(message.chatMessageId),
      count: chatMessageIds.length,
      chatMessageIds,
    };
    return { ...message, alternatives: shown };
  });
}
