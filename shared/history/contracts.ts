// The history area's contracts: each conversation kept long-term as one small header plus one item per message,
// with an index line per exchange and a rolling summary of what fell out of the prompt. Its documents, HTTP bodies
// and subscription; the turn's commit keeps the header's live fields, the history worker the persisted ones.
import { z } from 'zod';
import { displayTextSchema } from '../plain-text.js';
import { activePathSchema, ordinalGapSchema } from '../conversation/branches.js';
import { chatMessageIdSchema, userIdSchema, projectIdSchema } from '../ids.js';
import {
  conversationMessageSchema,
  systemPromptSchema,
  type ConversationMessage,
} from '../conversation/messages.js';
import { englishText, type ContainerSpec } from '../cosmos/container-spec.js';

/**
 * The subscription of `message-completed` the history worker reads. Sessions on: a conversation's turns are
 * persisted in order, which keeps the header's counters exact under redelivery (see conversationHeaderSchema).
 */
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
      "Long-term history: one item per message, one index entry per exchange, the conversation's rolling summary and its system prompt, so no item grows with the conversation; keyed by user then session, so a heavy user is not capped at 20 GB; message text is full-text searchable (history search).",
  },
];

// --- Limits -----------------------------------------------------------------------------------------------

/** A title, whoever set it (the first message is cut to 80 characters; a user may write a longer one). */
export const MAX_TITLE_CHARS = 200;
/** The title taken at once from the first user message. */
export const FIRST_MESSAGE_TITLE_CHARS = 80;
/** The preview of a conversation in the list: the start of its last message. */
export const PREVIEW_CHARS = 160;
/** Messages per page of GET /api/history/conversations/{sessionId}. */
export const DEFAULT_MESSAGE_PAGE = 100;
export const MAX_MESSAGE_PAGE = 500;
/** Conversations per page of the list. */
export const DEFAULT_CONVERSATION_PAGE = 20;
export const MAX_CONVERSATION_PAGE = 100;
/** The index lines of folded exchanges the prompt shows (the newest); the past-answer tools reach the rest. */
export const PROMPT_EXCHANGE_LINES = 20;

// --- Stored documents -------------------------------------------------------------------------------------

/** Who set a conversation's title: taken from the first message, written by the model, or by the user. */
export const titleSourceSchema = z.enum(['first-message', 'model', 'user']);
export type TitleSource = z.infer<typeof titleSourceSchema>;

export const tokenTotalsSchema = z.object({
  prompt: z.number().int().nonnegative(),
  completion: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
});
export type TokenTotals = z.infer<typeof tokenTotalsSchema>;

/**
 * The branch path a conversation shows and continues (chat/contracts.ts "Branches"): its newest turn, that turn's
 * branch and last ordinal. The header keeps it so the History API pages along it without reading working memory,
 * and a hot copy rebuilt after it expired resumes on it.
 */
export const conversationPathSchema = activePathSchema.extend({
  lastOrdinal: z.number().int().nonnegative(),
});
export type ConversationPath = z.infer<typeof conversationPathSchema>;

/**
 * A conversation's header (container `conversations`, partition userId, id = sessionId). Two writers, each with
 * its own fields, each write a patch of its fields only:
 * - the turn's commit (before `message-end`): creates it at the first turn (title from the first message), then
 *   sets `lastActivity`, `messageCount` and `preview` (only forward: messageCount never decreases);
 * - the history worker: `persistedCount`, `persistedAt`, `tokens` and `textTokens` (added once per turn: the patch
 *   is conditioned on persistedCount being below the turn's end, and the subscription delivers a session's turns
 *   in order; and on the header being unmarked and the one the job read), and the model's title (never over a user's);
 * - PUT .../title sets `title` with `titleSource: 'user'`;
 * - PUT .../branch sets `path` and `preview` (the commit sets them too);
 * - DELETE of the conversation sets `deleting` before it purges anything (kept out of this schema: a marked header
 *   is missing to a read of it), and no write removes it but the header's removal.
 */
export const conversationHeaderSchema = z.object({
  id: z.string(),
  kind: z.literal('conversation'),
  userId: userIdSchema,
  sessionId: z.string(),
  /** The project the conversation is filed in, if any. */
  projectId: projectIdSchema.optional(),
  title: z.string(),
  titleSource: titleSourceSchema,
  createdAt: z.string(),
  /** The newest message's timestamp. */
  lastActivity: z.string(),
  /** Messages in the conversation, committed (the next message's ordinal). */
  messageCount: z.number().int().nonnegative(),
  /** The start of the newest message's text. */
  preview: z.string(),
  /** Messages the history worker has stored as items (ordinals below this are in `conversation-messages`). */
  persistedCount: z.number().int().nonnegative(),
  /** When the history worker last stored a turn; null until it has. */
  persistedAt: z.string().nullable(),
  /** Tokens the conversation's turns used, as their `message-end` events reported them. */
  tokens: tokenTotalsSchema,
  /**
   * The prompt-size estimate of the text of every persisted turn (digest.ts `turnTokens`), summed. Against the
   * digest's `summarizedTokens` it tells how much history is not folded into the summary yet, so the worker decides
   * to fold without keeping a list of unfolded turns. Headers stored before it existed read as 0: their older
   * turns then count as folded, which at worst delays a fold (the prompt fits its history to the budget anyway).
   */
  textTokens: z.number().int().nonnegative().default(0),
  /** The active branch path; absent on conversations whose turns all came before branches (the main line). */
  path: conversationPathSchema.optional(),
  /** Set once a turn forked (an edit or a regenerate): only then does a read look for alternatives. */
  branched: z.literal(true).optional(),
});
export type ConversationHeader = z.infer<typeof conversationHeaderSchema>;

/** The owner's rating of an answer (thumbs up or down), kept on the answer's stored message. */
export const answerFeedbackSchema = z.object({
  rating: z.enum(['up', 'down']),
  /** ISO 8601: when the owner rated it. */
  at: z.string(),
});
export type AnswerFeedback = z.infer<typeof answerFeedbackSchema>;

/**
 * A message kept long-term (container `conversation-messages`, partition [userId, sessionId], id = messageId).
 * `ordinal` is its place in the conversation (0, 1, 2, ...), given when working memory committed it.
 */
export const storedMessageSchema = conversationMessageSchema.extend({
  id: z.string(),
  kind: z.literal('message'),
  userId: userIdSchema,
  sessionId: z.string(),
  ordinal: z.number().int().nonnegative(),
  /** Assistant only: the owner's rating, the one field set after the item is written. */
  feedback: answerFeedbackSchema.optional(),
});
export type StoredMessage = z.infer<typeof storedMessageSchema>;

/** A committed message (with its ordinal) as its long-term item. */
export function toStoredMessage(
  userId: string,
  sessionId: string,
  message: ConversationMessage & { ordinal: number },
): StoredMessage {
  return { ...message, id: message.messageId, kind: 'message', userId, sessionId };
}

/** The message a long-term item holds, the item's own keys dropped. */
export function fromStoredMessage(
  item: StoredMessage,
): ConversationMessage & { ordinal: number; feedback?: AnswerFeedback | undefined } {
  const { id: _id, kind: _kind, userId: _userId, sessionId: _sessionId, ...message } = item;
  return message;
}

/** One line on one exchange (a user message and its answer), with topic tags: the conversation's Q&A index. */
export const exchangeEntrySchema = z.object({
  /** The exchange's chatMessageId; retrieve_past_answer takes it. */
  exchangeId: z.string(),
  /** The ordinal of the exchange's user message. */
  ordinal: z.number().int().nonnegative(),
  line: z.string(),
  tags: z.array(z.string()),
  /** When the exchange's answer was committed. */
  at: z.string(),
});
export type ExchangeEntry = z.infer<typeof exchangeEntrySchema>;

/** An exchange's index entry as stored (container `conversation-messages`, id `exchange.{chatMessageId}`). */
export const exchangeDocumentSchema = exchangeEntrySchema.extend({
  id: z.string(),
  kind: z.literal('exchange'),
  userId: userIdSchema,
  sessionId: z.string(),
});
export type ExchangeDocument = z.infer<typeof exchangeDocumentSchema>;

export function exchangeDocumentId(chatMessageId: string): string {
  return `exchange.${chatMessageId}`;
}

/**
 * The conversation's rolling memory beyond the prompt (its summary and its index lines; container
 * `conversation-messages`, id `digest`): a summary of every message with an ordinal below `summarizedThrough`,
 * what those messages weigh in the prompt, and the index lines of the newest folded exchanges. Bounded: the
 * summary is kept short by the model, the lines to PROMPT_EXCHANGE_LINES; nothing in it grows with the
 * conversation. The history worker writes it only when it folds (every few turns, not every turn), so the turns'
 * conditional reads of it mostly find it unchanged; each turn reads it to build its prompt.
 */
export const sessionDigestSchema = z.object({
  summary: z.string(),
  /** Messages with a lower ordinal are in the summary and left out of the prompt's history. */
  summarizedThrough: z.number().int().nonnegative(),
  /**
   * The part of the header's `textTokens` that is not unfolded history of the digest's path: the folded turns'
   * tokens, and since branches exist also those of turns on other paths. The header's count less this is what the
   * path has not folded yet, so a turn that continues the path decides without reading anything; the worker sets
   * it again, from the path's messages, whenever a turn arrives on another path. Digests stored before it existed
   * read as 0.
   */
  summarizedTokens: z.number().int().nonnegative().default(0),
  /** Newest last. */
  recentExchanges: z.array(exchangeEntrySchema),
  updatedAt: z.string(),
  /**
   * The gaps of the branch path the digest was folded along (chat/contracts.ts "Branches"): it stands for that
   * path's older messages only. A turn on a path that does not keep what it folded leaves it out of the prompt
   * (digestStandsFor in history/digest.ts). The history worker sets them to the path of the newest turn it
   * persisted. Digests stored before branches existed read as the main line, with none.
   */
  gaps: z.array(ordinalGapSchema).default([]),
  /**
   * Counts the digest's writes (each one more than the digest it replaced). The history worker marks the revision it
   * is about to write in working memory first, so a turn that holds the digest of the revision marked there needs no
   * read of it. Digests stored before it existed have none (and are always read).
   */
  revision: z.number().int().positive().optional(),
});
export type SessionDigest = z.infer<typeof sessionDigestSchema>;

export const SESSION_DIGEST_ID = 'digest';

/**
 * A fold's result, kept for good beside the digest (container `conversation-messages`, id
 * `digest.{summarizedThrough}`): the summary of the messages of one path below `summarizedThrough`. The digest
 * itself follows the newest turn's path; when a turn arrives on a path the digest does not stand for (an edit or
 * regenerate below what it folded, or a switch back to another branch), the history worker starts again from the
 * newest checkpoint on that path instead of folding the path from its beginning, so the work stays bounded by the
 * prompt budget. One is written per fold (every few turns, never per turn), a summary's size each; a second write
 * for the same `summarizedThrough` leaves the first (both summarise the same messages: the path to a message is
 * unique).
 */
export const digestCheckpointSchema = z.object({
  summary: z.string(),
  summarizedThrough: z.number().int().positive(),
  /**
   * The ordinal of the last message it folded (summarizedThrough - 1). A path holding that message holds exactly
   * the messages the checkpoint summarised below it (each message has one path from the conversation's start), so
   * this ordinal alone tells which paths the checkpoint serves.
   */
  lastOrdinal: z.number().int().nonnegative(),
  /** The gaps of its path below summarizedThrough. */
  gaps: z.array(ordinalGapSchema),
  createdAt: z.string(),
});
export type DigestCheckpoint = z.infer<typeof digestCheckpointSchema>;

export function digestCheckpointId(summarizedThrough: number): string {
  return `digest.${summarizedThrough}`;
}

export const digestCheckpointDocumentSchema = digestCheckpointSchema.extend({
  id: z.string(),
  kind: z.literal('digest-checkpoint'),
  userId: userIdSchema,
  sessionId: z.string(),
});
export type DigestCheckpointDocument = z.infer<typeof digestCheckpointDocumentSchema>;

export const sessionDigestDocumentSchema = sessionDigestSchema.extend({
  id: z.literal(SESSION_DIGEST_ID),
  kind: z.literal('digest'),
  userId: userIdSchema,
  sessionId: z.string(),
});
export type SessionDigestDocument = z.infer<typeof sessionDigestDocumentSchema>;

/**
 * The conversation's system prompt as its first turn sent it (container `conversation-messages`, id
 * `system-prompt`): the personalised prompt is kept as the conversation's first message. It is not a
 * numbered message (no ordinal): paging, counts and search read messages only. Written once, by the history
 * worker, from the `message-completed` of the turn that opened the conversation.
 */
export const SYSTEM_PROMPT_ID = 'system-prompt';

export const systemPromptDocumentSchema = systemPromptSchema.extend({
  id: z.literal(SYSTEM_PROMPT_ID),
  kind: z.literal('system-prompt'),
  userId: userIdSchema,
  sessionId: z.string(),
});
export type SystemPromptDocument = z.infer<typeof systemPromptDocumentSchema>;

// --- What the History API answers ---------------------------------------------------------------------------

/** A conversation in the list. */
export const conversationSummarySchema = z.object({
  sessionId: z.string(),
  title: z.string(),
  titleSource: titleSourceSchema,
  createdAt: z.string(),
  lastActivity: z.string(),
  /** Every message of the conversation, on every branch. */
  messageCount: z.number().int().nonnegative(),
  /** The messages of the branch path it shows (what a reader sees): messageCount less the other branches'. */
  visibleMessageCount: z.number().int().nonnegative(),
  preview: z.string(),
  /** What the conversation's model calls cost so far (its turns and their background work), in US dollars. */
  cost: z.object({ usd: z.number() }).optional(),
});
export type ConversationSummary = z.infer<typeof conversationSummarySchema>;

export const conversationPageSchema = z.object({
  conversations: z.array(conversationSummarySchema),
  /** Pass back as `continuationToken` for the next page; absent on the last page. */
  continuationToken: z.string().optional(),
});
export type ConversationPage = z.infer<typeof conversationPageSchema>;

/**
 * The turns that answer the same point of a conversation (a turn and its edits and regenerates), oldest first: a
 * client shows "index + 1 of count" and switches with PUT .../branch { chatMessageId } of another.
 */
export const turnAlternativesSchema = z.object({
  /** This turn's place among them, from 0. */
  index: z.number().int().nonnegative(),
  count: z.number().int().positive(),
  chatMessageIds: z.array(z.string()),
});
export type TurnAlternatives = z.infer<typeof turnAlternativesSchema>;

/**
 * A message as the History API returns it (tool calls and results included, and its `branch`). Both messages of a
 * turn at a branch point carry the turn's `alternatives`.
 */
export const historyMessageSchema = conversationMessageSchema.extend({
  ordinal: z.number().int().nonnegative(),
  feedback: answerFeedbackSchema.optional(),
  alternatives: turnAlternativesSchema.optional(),
});
export type HistoryMessage = z.infer<typeof historyMessageSchema>;

export const conversationWithMessagesSchema = conversationSummarySchema.extend({
  /** The conversation's system prompt (its first message), when it has one. */
  systemPrompt: systemPromptSchema.optional(),
  /**
   * The branch path shown (messages are paged along it, so other branches' turns are not among them): its newest
   * turn and its branch. Absent while the conversation has no turn.
   */
  path: z.object({ leafChatMessageId: z.string(), branchId: z.string() }).optional(),
  messages: z.array(historyMessageSchema),
  continuationToken: z.string().optional(),
});
export type ConversationWithMessages = z.infer<typeof conversationWithMessagesSchema>;

/** The JSON export: the summary, the system prompt and every message. */
export const conversationExportSchema = conversationSummarySchema.extend({
  systemPrompt: systemPromptSchema.optional(),
  messages: z.array(historyMessageSchema),
});

export const historyStatsSchema = z.object({
  userId: z.string(),
  conversations: z.number().int().nonnegative(),
  messages: z.number().int().nonnegative(),
  tokens: tokenTotalsSchema,
  /** What the user's model calls cost, in US dollars: the chat's rounds and the background work apart. */
  cost: z.object({ usd: z.number(), turnsUsd: z.number(), backgroundUsd: z.number() }).optional(),
});
export type HistoryStats = z.infer<typeof historyStatsSchema>;

/** PUT /api/history/conversations/{sessionId}/branch: show (and continue) the branch this turn is on. */
export const branchBodySchema = z.object(
  { chatMessageId: chatMessageIdSchema },
  { error: 'the body must be a JSON object' },
);

/** PUT /api/history/conversations/{sessionId}/title. */
export const titleBodySchema = z.object(
  {
    title: displayTextSchema(MAX_TITLE_CHARS),
  },
  { error: 'the body must be a JSON object' },
);

/** PUT /api/history/conversations/{sessionId}/turns/{chatMessageId}/feedback: null takes the rating back. */
export const feedbackBodySchema = z.object(
  { rating: z.enum(['up', 'down']).nullable() },
  { error: 'the body must be a JSON object' },
);

export const feedbackReplySchema = z.object({
  chatMessageId: z.string(),
  feedback: answerFeedbackSchema.nullable(),
});
export type FeedbackReply = z.infer<typeof feedbackReplySchema>;
