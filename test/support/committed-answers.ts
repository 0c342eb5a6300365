// Where a test reads what the product committed for its turns after a run: today the session's working memory
// in the hot store (its entry's `messages` with `{chatMessageId}_assistant` ids, after those of the base it names).
import type { Database } from '@azure/cosmos';
import type { AppConfig } from '../../shared/app/config.js';
import { SESSIONS_CONTAINER } from '../../shared/chat/contracts/documents.js';
import { CONVERSATION_MESSAGES_CONTAINER, CONVERSATIONS_CONTAINER } from '../../shared/history/contracts.js';
import { CONVERSATION_SUMMARIES_CONTAINER, PROFILE_FACTS_CONTAINER } from '../../shared/memory/contracts.js';
import { withRuntimeHotStore } from './runtime-hot-store.js';

/** The assistant messages stored for each turn of a session, by chatMessageId (more than one is a duplicate). */
export async function readCommittedAnswers(
  runtime: { config: AppConfig; clients: { database: Database } },
  sessionId: string,
): Promise<Map<string, string[]>> {
  const answers = new Map<string, string[]>();
  // Whichever adapter HOT_STORE names: the working memory's entry is keyed by the session's id, and the window's
  // older messages are in the base it names, from its `skip`th on.
  type Stored = { messages?: { messageId?: string; role?: string; content?: string }[] };
  const { messages, base } = await withRuntimeHotStore(runtime, async (hot) => {
    const entry = await hot.read(sessionId, sessionId);
    const value = (entry?.value ?? {}) as Stored & { base?: { id: string; skip: number } };
    const named = value.base && (await hot.read(sessionId, value.base.id));
    return {
      messages: value.messages,
      base: ((named?.value ?? {}) as Stored).messages?.slice(value.base?.skip ?? 0),
    };
  });
  for (const message of [...(base ?? []), ...(messages ?? [])]) {
    const turn = /^(.*)_assistant$/.exec(message.messageId ?? '')?.[1];
    if (turn === undefined || message.role !== 'assistant') continue;
    answers.set(turn, [...(answers.get(turn) ?? []), message.content ?? '']);
  }
  return answers;
}

/** Whether the user's session is stored. */
export async function sessionExists(database: Database, userId: string, sessionId: string): Promise<boolean> {
  const { resource } = await database.container(SESSIONS_CONTAINER).item(sessionId, userId).read();
  return resource !== undefined;
}

/**
 * What the history worker stored long-term for a session: its assistant messages by chatMessageId, and the
 * header's committed and persisted message counts (undefined when there is no header).
 */
export async function readPersistedAnswers(
  database: Database,
  userId: string,
  sessionId: string,
): Promise<{
  answers: Map<string, string[]>;
  messageCount: number | undefined;
  persistedCount: number | undefined;
}> {
  const { resources } = await database
    .container(CONVERSATION_MESSAGES_CONTAINER)
    .items.query<{ chatMessageId: string; content: string }>(
      {
        query: "SELECT c.chatMessageId, c.content FROM c WHERE c.kind = 'message' AND c.role = 'assistant'",
      },
      { partitionKey: [userId, sessionId] },
    )
    .fetchAll();
  const answers = new Map<string, string[]>();
  for (const item of resources)
    answers.set(item.chatMessageId, [...(answers.get(item.chatMessageId) ?? []), item.content]);
  const { resource } = await database
    .container(CONVERSATIONS_CONTAINER)
    .item(sessionId, userId)
    .read<{ messageCount: number; persistedCount: number }>();
  return { answers, messageCount: resource?.messageCount, persistedCount: resource?.persistedCount };
}

/**
 * What the memory worker kept of a session: its summary's count of exchanges and highest ordinal covered (undefined
 * when it has none), and how many turns' profile changes it recorded.
 */
export async function readMemoryTraces(
  database: Database,
  userId: string,
  sessionId: string,
): Promise<{ exchanges: number | undefined; coveredThrough: number | undefined; consolidations: number }> {
  const { resource } = await database
    .container(CONVERSATION_SUMMARIES_CONTAINER)
    .item(sessionId, userId)
    .read<{ exchanges: number; coveredThrough: number }>();
  const { resources } = await database
    .container(PROFILE_FACTS_CONTAINER)
    .items.query<number>(
      {
        query: "SELECT VALUE COUNT(1) FROM c WHERE c.kind = 'consolidation' AND c.sessionId = @sessionId",
        parameters: [{ name: '@sessionId', value: sessionId }],
      },
      { partitionKey: userId },
    )
    .fetchAll();
  return {
    exchanges: resource?.exchanges,
    coveredThrough: resource?.coveredThrough,
    consolidations: resources[0] ?? 0,
  };
}

/** The user's active facts that say the same thing in the same category as another active fact. */
export async function readDuplicateFacts(database: Database, userId: string): Promise<string[]> {
  const { resources } = await database
    .container(PROFILE_FACTS_CONTAINER)
    .items.query<{ category: string; statement: string }>(
      "SELECT c.category, c.statement FROM c WHERE c.kind = 'fact' AND c.status = 'active'",
      { partitionKey: userId },
    )
    .fetchAll();
  const seen = new Set<string>();
  const duplicates: string[] = [];
  for (const fact of resources) {
    const key = `${fact.category}: ${fact.statement.toLowerCase()}`;
    if (seen.has(key)) duplicates.push(key);
    seen.add(key);
  }
  return duplicates;
}
