// What every History API read shares: the caller's header (another user's conversation is not found, exactly like
// an unknown one), read-your-writes from working memory (the messages the history worker has not stored yet, by
// ordinal), the path shown, and the system prompt that heads the conversation apart from its numbered messages.
import type { UsageCounter } from '../usage/contracts.js';
import { roundUsd } from '../usage/prices.js';
import type { UsageLedger } from '../usage/usage-ledger.js';
import { activeLeaf, pathOf } from '../conversation/active-path.js';
import type { SystemPrompt } from '../conversation/messages.js';
import type { WorkingMemory, WorkingMemoryStore } from '../conversation/working-memory-store.js';
import { NotFoundError } from '../errors.js';
import type {
  ConversationHeader,
  ConversationPath,
  ConversationSummary,
  HistoryMessage,
} from './contracts.js';
import type { ConversationHeaders } from './conversation-headers.js';
import type { ConversationMessages } from './conversation-messages.js';

export interface HistoryReadServices {
  headers: ConversationHeaders;
  messages: ConversationMessages;
  workingMemory: WorkingMemoryStore;
  /** What each conversation's model calls cost (absent: summaries carry no cost). */
  usage?: Pick<UsageLedger, 'counter' | 'conversations'>;
}

/** A conversation's cost from its usage counter: its turns' and its background work's, in US dollars. */
export function costField(counter: UsageCounter | undefined): { cost: { usd: number } } {
  return { cost: { usd: counter ? roundUsd(counter.turns.costUsd + counter.background.costUsd) : 0 } };
}

export async function requireHeader(
  headers: ConversationHeaders,
  userId: string,
  sessionId: string,
): Promise<ConversationHeader> {
  const header = await headers.get(userId, sessionId);
  if (header === undefined) throw notFound(sessionId);
  return header;
}

export function notFound(sessionId: string): NotFoundError {
  return new NotFoundError(`No conversation '${sessionId}' for this user.`);
}

export function toSummary(header: ConversationHeader): ConversationSummary {
  const { sessionId, title, titleSource, createdAt, lastActivity, messageCount, preview } = header;
  const visibleMessageCount = visibleMessages(header);
  return {
    sessionId,
    title,
    titleSource,
    createdAt,
    lastActivity,
    messageCount,
    visibleMessageCount,
    preview,
  };
}

/**
 * The messages of the path the header shows, from that path as every commit and switch keeps it: its ordinals up
 * to the leaf's last, less its gaps (the other branches'). A conversation with no path is one line: all of them.
 */
export function visibleMessages(header: Pick<ConversationHeader, 'messageCount' | 'path'>): number {
  const { path } = header;
  if (path === undefined) return header.messageCount;
  const end = path.lastOrdinal + 1;
  const skipped = path.branch.gaps.reduce(
    (sum, gap) => sum + Math.max(0, Math.min(gap.to, end) - Math.min(gap.from, end)),
    0,
  );
  return Math.min(header.messageCount, end - skipped);
}

/**
 * Working memory, read only when the header says it holds committed messages the history worker has not stored
 * yet: a conversation wholly stored costs no hot-store read.
 */
export function pendingMemory(
  workingMemory: WorkingMemoryStore,
  header: ConversationHeader,
): Promise<WorkingMemory | undefined> {
  if (header.messageCount <= header.persistedCount) return Promise.resolve(undefined);
  return workingMemory.load(header.userId, header.sessionId);
}

/**
 * The committed messages of the active path the history worker has not stored yet (ordinal >= persistedCount):
 * working memory's window holds that path.
 */
export function unpersistedMessages(
  memory: WorkingMemory | undefined,
  header: ConversationHeader,
): HistoryMessage[] {
  if (memory === undefined) return [];
  return memory.messages.filter(
    (message): message is HistoryMessage =>
      message.ordinal !== undefined && message.ordinal >= header.persistedCount,
  );
}

/**
 * The path shown: working memory's when it was read (it moves first), else the header's; none for a conversation
 * whose turns all came before branches (all of it is its main line).
 */
export function shownPath(
  header: ConversationHeader,
  memory: WorkingMemory | undefined,
): ConversationPath | undefined {
  const leaf = memory === undefined ? undefined : activeLeaf(memory);
  if (memory?.path !== undefined && leaf !== undefined) return pathOf(leaf);
  return header.path;
}

/**
 * The conversation's system prompt. The history worker stores it with the opening turn's messages, before it
 * records them: once a message is stored (persistedCount > 0) long-term history has it, if it ever will; until
 * then working memory does (read then anyway for the unstored messages).
 */
export async function systemPromptOf(
  messages: ConversationMessages,
  header: ConversationHeader,
  memory: Promise<WorkingMemory | undefined>,
): Promise<SystemPrompt | undefined> {
  if (header.persistedCount > 0) return messages.getSystemPrompt(header.userId, header.sessionId);
  return (await memory)?.systemPrompt;
}
