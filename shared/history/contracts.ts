// The history area's contracts. The history worker (a later issue) consumes `message-completed`
// (shared/chat/contracts.ts) on the `history` subscription and keeps each conversation long-term; its message
// and header documents, its HTTP bodies and its subscription are declared here when it lands.
import { z } from 'zod';
import { conversationMessageSchema, userIdSchema } from '../chat/contracts.js';
import { englishText, type ContainerSpec } from '../cosmos/container-spec.js';

/** The subscription of `message-completed` the history worker will read. */
export const HISTORY_SUBSCRIPTION = 'history';

export const CONVERSATIONS_CONTAINER = 'conversations';
export const CONVERSATION_MESSAGES_CONTAINER = 'conversation-messages';

export const historyContainers: readonly ContainerSpec[] = [
  {
    id: CONVERSATIONS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    fullTextPaths: [englishText('/title')],
    purpose:
      'Long-term history: one small header per conversation (session) with its title, dates, counts and preview, listed by user; titles are full-text searchable.',
  },
  {
    id: CONVERSATION_MESSAGES_CONTAINER,
    partitionKeyPaths: ['/userId', '/sessionId'],
    fullTextPaths: [englishText('/content')],
    purpose:
      'Long-term history: one item per message, so no item grows with the conversation; keyed by user then session, so a heavy user is not capped at 20 GB; message text is full-text searchable (history search).',
  },
];

/**
 * A conversation kept long-term, as working memory reads it back when the hot copy has expired (id = sessionId,
 * partition = userId). The history worker, when it lands, writes the header and one item per message instead
 * (the containers above), and working memory's rebuild follows it.
 */
export const conversationDocumentSchema = z.object({
  id: z.string(),
  userId: userIdSchema,
  sessionId: z.string(),
  /** Oldest first. */
  messages: z.array(conversationMessageSchema),
  createdAt: z.string(),
});
export type ConversationDocument = z.infer<typeof conversationDocumentSchema>;
