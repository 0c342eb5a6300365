// Where a test reads what the product committed for its turns after a run: today the session's working memory in
// the hot store (one document per session, its `messages` with `{chatMessageId}_assistant` ids). Kept in this one
// place because the answers' home may move (the long-term history) without the tests' questions changing.
import type { Database } from '@azure/cosmos';
import { HOT_CONVERSATIONS_CONTAINER, SESSIONS_CONTAINER } from '../../shared/chat/contracts.js';

/** The assistant messages stored for each turn of a session, by chatMessageId (more than one is a duplicate). */
export async function readCommittedAnswers(
  database: Database,
  sessionId: string,
): Promise<Map<string, string[]>> {
  const answers = new Map<string, string[]>();
  const { resource } = await database
    .container(HOT_CONVERSATIONS_CONTAINER)
    .item(sessionId, sessionId)
    .read<{ messages?: { messageId?: string; role?: string; content?: string }[] }>();
  for (const message of resource?.messages ?? []) {
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
