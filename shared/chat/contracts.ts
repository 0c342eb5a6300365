// The chat area's contracts: the zod schemas and types of what it accepts over HTTP, the messages it puts on
// Service Bus (`user-messages`, `message-completed`), the documents it stores, and the inputs and outputs of the
// chatTurn orchestration's activities. Other areas import these, never chat's adapters. Field names follow
// seed 000 (`sessionId`, `chatMessageId`, `text`).
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ContainerSpec } from '../cosmos/container-spec.js';
import { chatMessageIdSchema, sessionIdSchema, userIdSchema } from '../ids.js';
import { knowledgeSourceSchema } from '../knowledge/contracts.js';
import { llmUsageSchema, toolCallSchema } from '../llm/llm-gateway.js';

// --- Identifiers -------------------------------------------------------------------------------------------
// Session ids are made by the server, chat message ids by the client. Their formats, and the user id's, are
// defined with every other id a client can name (shared/ids.ts); chat's contracts pass them on.

export { chatMessageIdSchema, sessionIdSchema, userIdSchema };

export function newSessionId(): string {
  return randomUUID();
}

/** The chatTurn orchestration of a message: one instance per (session, message), so a duplicate is a no-op. */
export function turnInstanceId(sessionId: string, chatMessageId: string): string {
  return `chat-${sessionId}-${chatMessageId}`;
}

/** The `message-completed` message of a turn; its id makes a re-published announcement a duplicate. */
export function completedMessageId(sessionId: string, chatMessageId: string): string {
  return `${sessionId}.${chatMessageId}.completed`;
}

/** A stored message's id is `{chatMessageId}_{role}` (seed 000): every write of a turn is idempotent. */
export function userMessageId(chatMessageId: string): string {
  return `${chatMessageId}_user`;
}

export function assistantMessageId(chatMessageId: string): string {
  return `${chatMessageId}_assistant`;
}

// --- Where chat's data lives ------------------------------------------------------------------------------

/** Queue that carries posted chat messages to the chat worker (sessions on: FIFO per chat session). */
export const USER_MESSAGES_QUEUE = 'user-messages';
/** Topic on which a finished turn is announced; each consumer (history, memory) has its own subscription. */
export const MESSAGE_COMPLETED_TOPIC = 'message-completed';

export const SESSIONS_CONTAINER = 'sessions';
export const HOT_CONVERSATIONS_CONTAINER = 'hot-conversations';

/**
 * How long a deleted conversation's session document stays as its tombstone. Longer than any message of the
 * conversation can still be delivered: a `message-completed` event waits at most its subscription's 7 days, and is
 * then delivered at most 10 times under a lock renewed for up to 30 minutes each (7 days 5 hours in all; the
 * `user-messages` queue never expires its messages, but its worker starts no turn for a session that is gone).
 * session-tombstone.test.ts checks the figure against the entities' settings and host.json.
 */
export const SESSION_TOMBSTONE_TTL_SECONDS = 8 * 24 * 60 * 60;

/** 24 h, the hot store's time to live (seed 000: the hot cache keeps active conversations for a day). */
export const HOT_STORE_TTL_SECONDS = 24 * 60 * 60;

export const chatContainers: readonly ContainerSpec[] = [
  {
    id: SESSIONS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    // Only a deleted conversation's tombstone sets a `ttl`: sessions and posted records never expire.
    defaultTtlSeconds: -1,
    purpose:
      "Chat sessions, one document per session, owned by a user; a deleted conversation's stays as its tombstone for 8 days.",
  },
  {
    id: HOT_CONVERSATIONS_CONTAINER,
    partitionKeyPaths: ['/sessionId'],
    defaultTtlSeconds: HOT_STORE_TTL_SECONDS,
    purpose:
      'Working memory of active conversations (the hot store) and the state of their running turns; expires 24 h after the last write.',
  },
];

// --- Branches ---------------------------------------------------------------------------------------------
// A conversation is a tree of turns: regenerating an answer or editing a user message starts a new turn beside
// the one it replaces (an alternative), and the conversation branches there. Ordinals stay the conversation's
// commit order (every committed message takes the next one, whatever its branch), so a child always has higher
// ordinals than its parent, and a branch's path is every ordinal up to its newest turn except a few ranges: its
// gaps, one per place where the path jumps over turns of other branches. A path is described by its gaps, whose
// number grows with the forks on it, never with the conversation's length.

/** The branch a conversation begins on. */
export const MAIN_BRANCH = 'main';

/** Forks one path may cross; a later edit or regenerate on a path with this many is refused (409). */
export const MAX_PATH_GAPS = 64;

/** Ordinals `from` ≤ o < `to` that are not on a path. */
export const ordinalGapSchema = z.object({
  from: z.number().int().nonnegative(),
  to: z.number().int().nonnegative(),
});
export type OrdinalGap = z.infer<typeof ordinalGapSchema>;

/**
 * Where a turn sits in its conversation's tree. Carried by both messages of every turn committed since branches
 * exist; a message without it is on the main branch and follows the turn before it, with no gaps.
 */
export const turnBranchSchema = z.object({
  /** The turn this one follows on its path; null for a conversation's first turn. */
  parentChatMessageId: z.string().nullable(),
  /** MAIN_BRANCH, or the chatMessageId of the edit or regenerate that started the branch; a continuation keeps its parent's. */
  branchId: z.string(),
  /** Set on an edit or regenerate: the first turn of the group of alternatives it belongs to (the one first replaced). */
  alternativeOf: z.string().optional(),
  origin: z.enum(['edit', 'regenerate']).optional(),
  /** Ordinal ranges below this turn's that are not on its path, in ascending order, none touching another. */
  gaps: z.array(ordinalGapSchema).max(MAX_PATH_GAPS),
});
export type TurnBranch = z.infer<typeof turnBranchSchema>;

/**
 * What a posted message replaces: `editOf` in POST /api/chat (origin edit, the user's new text) or
 * POST .../{chatMessageId}/regenerate (origin regenerate, the same text). The new turn follows the replaced turn's
 * parent, and the conversation continues on the new branch.
 */
export const turnForkSchema = z.object({
  replaces: z.string(),
  origin: z.enum(['edit', 'regenerate']),
});
export type TurnFork = z.infer<typeof turnForkSchema>;

/** The path a conversation is on: its newest turn, and that turn's branch (its gaps describe the path). */
export const activePathSchema = z.object({
  leafChatMessageId: z.string(),
  branch: turnBranchSchema,
  /**
   * The ordinal of the leaf's last message: the path is every ordinal up to it outside the gaps. Absent on paths
   * written before it was kept; then the window's newest message (the leaf's) gives it.
   */
  lastOrdinal: z.number().int().nonnegative().optional(),
});
export type ActivePath = z.infer<typeof activePathSchema>;

/** Finish reason of a turn its owner stopped: the text generated until then is its answer. */
export const CANCELLED_FINISH_REASON = 'cancelled';

/** /api/chat/{sessionId}/{chatMessageId}/cancel and .../regenerate. */
export const turnParamsSchema = z.object({ sessionId: sessionIdSchema, chatMessageId: chatMessageIdSchema });

/** The body of POST .../{chatMessageId}/regenerate: the new turn's id. */
export const regenerateBodySchema = z.object(
  { chatMessageId: chatMessageIdSchema, userId: z.string({ error: 'must be a string' }).max(128).optional() },
  { error: 'the body must be a JSON object' },
);

// --- HTTP -------------------------------------------------------------------------------------------------

/** POST /api/session/start: a client may name its user (it must be the caller); the body may also be empty. */
export const startSessionBodySchema = z
  .object(
    { userId: z.string({ error: 'must be a string' }).max(128).optional() },
    { error: 'the body must be a JSON object' },
  )
  .optional();

/** A session as stored and as POST /api/session/start answers it (201). */
export const chatSessionSchema = z.object({
  sessionId: z.string(),
  userId: userIdSchema,
  createdAt: z.iso.datetime(),
});
export type ChatSession = z.infer<typeof chatSessionSchema>;

/** A posted chat message, as validated from the request body of POST /api/chat. */
export interface ChatRequest {
  sessionId: string;
  chatMessageId: string;
  text: string;
  /** Seed 000's clients send their user id; when present it must be the caller's. */
  userId?: string;
  /**
   * Seed 003's `use_memory` (also accepted as `useMemory`), default true. False: the turn neither reads nor writes
   * long-term memory (no profile in its prompt, no conversation search, nothing consolidated from it).
   */
  useMemory: boolean;
  /** Replaces this earlier user message of the session: the conversation branches there (TurnFork, origin edit). */
  editOf?: string;
}

/** `question` is accepted as another name for `text`. */
export function chatRequestSchema(maxTextChars: number) {
  const text = z
    .string({ error: 'must be a string' })
    .refine((value) => value.trim() !== '', 'must not be empty')
    .refine((value) => value.length <= maxTextChars, `must be at most ${maxTextChars} characters`);
  return z
    .object(
      {
        sessionId: sessionIdSchema,
        chatMessageId: chatMessageIdSchema,
        text: text.optional(),
        question: text.optional(),
        userId: z.string({ error: 'must be a string' }).max(128).optional(),
        use_memory: z.boolean({ error: 'must be true or false' }).optional(),
        useMemory: z.boolean({ error: 'must be true or false' }).optional(),
        editOf: chatMessageIdSchema.optional(),
      },
      { error: 'the body must be a JSON object' },
    )
    .superRefine((body, context) => {
      if (body.text === undefined && body.question === undefined)
        context.addIssue({ code: 'custom', path: ['text'], message: 'is required' });
      else if (body.text !== undefined && body.question !== undefined && body.text !== body.question)
        context.addIssue({
          code: 'custom',
          path: ['question'],
          message: 'is another name for text: send one of them (or the same value in both)',
        });
      if (body.editOf !== undefined && body.editOf.toLowerCase() === body.chatMessageId.toLowerCase())
        context.addIssue({
          code: 'custom',
          path: ['editOf'],
          message: 'names the message being sent: give the earlier message it replaces',
        });
      if (body.use_memory !== undefined && body.useMemory !== undefined && body.use_memory !== body.useMemory)
        context.addIssue({
          code: 'custom',
          path: ['useMemory'],
          message: 'is another name for use_memory: send one of them (or the same value in both)',
        });
    })
    .transform((body): ChatRequest => ({
      sessionId: body.sessionId,
      chatMessageId: body.chatMessageId,
      text: body.text ?? body.question ?? '',
      userId: body.userId,
      useMemory: body.use_memory ?? body.useMemory ?? true,
      ...(body.editOf !== undefined ? { editOf: body.editOf } : {}),
    }));
}

/** POST /api/chat's 202 body: the message is queued and its events stream at `stream`. */
export interface ChatAccepted {
  sessionId: string;
  chatMessageId: string;
  status: 'queued';
  stream: string;
}

/**
 * POST /api/chat/{sessionId}/{chatMessageId}/cancel's answer: 202 `cancelling` while the turn is queued or running
 * (its stream ends with `message-end`, finish reason `cancelled`, unless it ends on its own first); 200 `finished`
 * when it had already ended, with how (`error` for a failed turn; absent when its events are gone).
 */
export type TurnCancelOutcome =
  | { sessionId: string; chatMessageId: string; status: 'cancelling' }
  | { sessionId: string; chatMessageId: string; status: 'finished'; finishReason?: string };

// --- Messages ---------------------------------------------------------------------------------------------

/** The body of a `user-messages` message: validated when the front door publishes it and when the worker takes it. */
export const queuedChatMessageSchema = z.object({
  userId: userIdSchema,
  sessionId: sessionIdSchema,
  chatMessageId: chatMessageIdSchema,
  text: z.string().min(1),
  /** When the front door accepted it (ISO 8601). */
  postedAt: z.iso.datetime(),
  /** False: the turn neither reads nor writes long-term memory (ChatRequest.useMemory). Absent means true. */
  useMemory: z.boolean().optional(),
  /** Set when the message replaces an earlier turn (an edit or a regenerate): the conversation branches there. */
  fork: turnForkSchema.optional(),
});
export type QueuedChatMessage = z.infer<typeof queuedChatMessageSchema>;

/**
 * `useMemory: false` when the turn was posted with use_memory false; nothing otherwise (absent means true), so the
 * messages and inputs of the usual turn keep the shape they always had.
 */
export function memoryFlag(input: { useMemory?: boolean | undefined }): { useMemory?: false } {
  return input.useMemory === false ? { useMemory: false } : {};
}

export const turnRefSchema = z.object({
  userId: userIdSchema,
  sessionId: z.string(),
  chatMessageId: z.string(),
});
/** Which turn: the user, the session and the message it answers. */
export type TurnRef = z.infer<typeof turnRefSchema>;

// --- Stored documents -------------------------------------------------------------------------------------

export const sessionDocumentSchema = chatSessionSchema.extend({
  id: z.string(),
  /** Set when DELETE of its conversation began: from then on the session is not found (the delete resumes). */
  deletingAt: z.iso.datetime().optional(),
  /**
   * Set when that DELETE finished: the document stays as the conversation's tombstone, which every writer of the
   * conversation reads, until its own `ttl` (SESSION_TOMBSTONE_TTL_SECONDS) expires.
   */
  deletedAt: z.iso.datetime().optional(),
  ttl: z.number().int().positive().optional(),
});
export type SessionDocument = z.infer<typeof sessionDocumentSchema>;

export const turnFailureSchema = z.object({ code: z.string(), message: z.string() });
/** What a client is told when a turn fails; the details stay in the logs. */
export type TurnFailure = z.infer<typeof turnFailureSchema>;

/** One tool call of a turn, with the result the model was given. */
export const storedToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** The JSON text of the arguments exactly as the model produced it. */
  arguments: z.string(),
  result: z.string(),
  isError: z.boolean(),
  /** The round of the turn the call belongs to (0 = the first, as in the tool-call and tool-result events). */
  round: z.number().int().nonnegative(),
});
export type StoredToolCall = z.infer<typeof storedToolCallSchema>;

/**
 * A conversation's system prompt as sent to the model: the conversation's first message (seed 000 stores the
 * personalised prompt first), kept apart from the numbered messages. `personalised`: rendered with the profile.
 */
export const systemPromptSchema = z.object({
  content: z.string(),
  personalised: z.boolean(),
  /** When the first turn rendered it. */
  createdAt: z.iso.datetime(),
});
export type SystemPrompt = z.infer<typeof systemPromptSchema>;

/** A message of a conversation as the hot store, the long-term history and prompt building keep it. */
export const conversationMessageSchema = z.object({
  /** `${chatMessageId}_user` | `${chatMessageId}_assistant`. */
  messageId: z.string(),
  chatMessageId: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  /** ISO 8601. */
  timestamp: z.string(),
  /** Assistant only: the tool calls of the turn and their results. */
  toolCalls: z.array(storedToolCallSchema).optional(),
  /** Assistant only. */
  finishReason: z.string().optional(),
  /** Assistant only: the tokens the turn's model calls used, as its `message-end` event reports them. */
  usage: llmUsageSchema.optional(),
  /** User only: the turn failed; the user's message is kept. */
  failure: turnFailureSchema.optional(),
  /**
   * Assistant only: the knowledge-base chunks the turn's tools found (deduplicated, in the order found, at most
   * MAX_TURN_SOURCES), as its `sources` event streamed them; absent when there were none.
   */
  sources: z.array(knowledgeSourceSchema).optional(),
  /**
   * The message's place in the conversation (0, 1, 2, ...), given by working memory when it commits the message;
   * absent only in the input of that commit. Long-term history orders and pages by it.
   */
  ordinal: z.number().int().nonnegative().optional(),
  /** The turn's place in the conversation's tree (both messages of a turn carry the same); absent on older turns. */
  branch: turnBranchSchema.optional(),
});
export type ConversationMessage = z.infer<typeof conversationMessageSchema>;

/**
 * A `message-completed` body larger than this carries its messages with tool results cut, then their sources'
 * excerpts, then their sources (`complete: false`): a Service Bus Standard message holds 256 KB with its headers.
 */
export const MESSAGE_COMPLETED_MAX_BYTES = 192 * 1024;

/**
 * The body of a `message-completed` message: which turn ended, how, and its messages as committed (the user's,
 * and the assistant's with its tool calls and results, or the failure), with their ordinals. The consumers
 * (history, memory) need nothing else, so they never read working memory. When the messages would make the body
 * larger than MESSAGE_COMPLETED_MAX_BYTES, their tool results are cut (then their sources) and `complete` is false:
 * a consumer that needs them whole reads the turn from working memory.
 */
export const messageCompletedSchema = turnRefSchema.extend({
  outcome: z.enum(['completed', 'failed']),
  completedAt: z.iso.datetime(),
  messages: z.array(conversationMessageSchema.extend({ ordinal: z.number().int().nonnegative() })),
  complete: z.boolean(),
  /** False: the turn was posted with use_memory false; the memory worker leaves it out. Absent means true. */
  useMemory: z.boolean().optional(),
  /** On the turn that began the conversation: its system prompt, which history keeps as its first message. */
  systemPrompt: systemPromptSchema.optional(),
});
export type MessageCompleted = z.infer<typeof messageCompletedSchema>;

/** Working memory: one document per session in the hot container (id = sessionId). */
export const hotConversationDocumentSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  userId: userIdSchema,
  /** Oldest first. */
  messages: z.array(conversationMessageSchema),
  createdAt: z.string(),
  lastActivity: z.string(),
  /** Messages the conversation has had in all (the next ordinal); the window holds only the newest. */
  messageCount: z.number().int().nonnegative().optional(),
  /**
   * The system prompt as the conversation's first turn sent it (personalised from the profile, or the basic one):
   * the conversation's first message, kept apart from the window so trimming never drops it.
   */
  systemPrompt: systemPromptSchema.optional(),
  /**
   * The path the conversation is on (its window holds only that path's messages); absent until a turn with a
   * branch committed: then the window's newest turn on the main branch.
   */
  path: activePathSchema.optional(),
  /**
   * Messages of other branches that left the window when the path moved (an edit, a regenerate, a switch), newest
   * last, within the window's byte budget: the history worker may not have stored them yet, and a switch back or
   * the History API takes them from here meanwhile. Absent until the path first moved.
   */
  offPath: z.array(conversationMessageSchema).optional(),
});
export type HotConversationDocument = z.infer<typeof hotConversationDocumentSchema>;

/** One LLM call of a turn, as the turn record keeps it once the call asked for tools. */
export const roundRecordSchema = z.object({
  round: z.number().int().nonnegative(),
  content: z.string(),
  reasoning: z.string(),
  toolCalls: z.array(toolCallSchema),
  finishReason: z.string(),
  usage: llmUsageSchema.optional(),
  /** seq the next activity starts from. */
  nextSeq: z.number().int().positive(),
});
export type RoundRecord = z.infer<typeof roundRecordSchema>;

/**
 * The working-memory messages a turn's prompt holds, first and last by messageId: a reference, never a copy, so
 * the turn record stays small however long the conversation is.
 */
export const historyRangeSchema = z.object({ fromMessageId: z.string(), toMessageId: z.string() });
export type HistoryRange = z.infer<typeof historyRangeSchema>;

/**
 * The state of a turn whose model asked for tools, beside the session's working memory in the hot container.
 * A turn answered in its first round never needs one.
 */
export const turnRecordSchema = turnRefSchema.extend({
  userText: z.string(),
  postedAt: z.string(),
  /** The history the prompt was built from; null when the conversation had none. */
  history: historyRangeSchema.nullable(),
  rounds: z.array(roundRecordSchema),
  /** A new conversation's system prompt, as its first round rendered it: later rounds send the same. */
  systemPrompt: systemPromptSchema.optional(),
  /** False: the turn was posted with use_memory false. Absent means true. */
  useMemory: z.boolean().optional(),
  /** The turn's place in the conversation's tree, decided when the turn began. */
  branch: turnBranchSchema.optional(),
});
export type TurnRecord = z.infer<typeof turnRecordSchema>;

export const turnDocumentSchema = turnRecordSchema.extend({ id: z.string(), kind: z.literal('turn') });
export type TurnDocument = z.infer<typeof turnDocumentSchema>;

export const toolResultRecordSchema = z.object({
  round: z.number().int().nonnegative(),
  index: z.number().int().nonnegative(),
  toolCallId: z.string(),
  name: z.string(),
  arguments: z.string(),
  result: z.string(),
  isError: z.boolean(),
  /** The knowledge-base chunks the call found (a `cited` result); absent when it found none. */
  sources: z.array(knowledgeSourceSchema).optional(),
});
export type ToolResultRecord = z.infer<typeof toolResultRecordSchema>;

export const toolResultDocumentSchema = toolResultRecordSchema.extend({
  ...turnRefSchema.shape,
  id: z.string(),
  kind: z.literal('tool-result'),
});
export type ToolResultDocument = z.infer<typeof toolResultDocumentSchema>;

/** The id of a turn's cancellation in the hot container (beside the turn's record, in the session's partition). */
export function turnCancellationDocumentId(chatMessageId: string): string {
  return `cancel.${chatMessageId}`;
}

/**
 * The owner asked to stop the turn: created once (a second request finds it), read by the turn's steps before each
 * model round and tool call and, while a model stream is open, once per poll interval. Expires with the hot store.
 */
export const turnCancellationDocumentSchema = turnRefSchema.extend({
  id: z.string(),
  kind: z.literal('turn-cancellation'),
  requestedAt: z.iso.datetime(),
});
export type TurnCancellationDocument = z.infer<typeof turnCancellationDocumentSchema>;

// --- The chatTurn orchestration and its activities ----------------------------------------------------------

export const CHAT_TURN_ORCHESTRATION = 'chatTurn';

export const TURN_ACTIVITIES = {
  llmStep: 'llmStep',
  runTool: 'runTool',
  fail: 'failTurn',
} as const;

/** Finish reason when the model still wanted tools after maxToolRounds rounds. */
export const TOOL_ROUNDS_EXHAUSTED = 'tool_rounds_exhausted';

/** The orchestration's input. */
export const chatTurnInputSchema = queuedChatMessageSchema.extend({
  maxToolRounds: z.number().int().nonnegative(),
});
export type ChatTurnInput = z.infer<typeof chatTurnInputSchema>;

/**
 * One model round. Round 0 also prepares the turn (it gets the user's message); the round whose model answers
 * without tools also commits the turn.
 */
export const llmStepInputSchema = turnRefSchema.extend({
  round: z.number().int().nonnegative(),
  firstSeq: z.number().int().positive(),
  /** False once maxToolRounds rounds of tools ran: the model is asked for a text answer. */
  toolsAllowed: z.boolean(),
  /** Round 0 only. */
  message: z.object({ text: z.string(), postedAt: z.string(), fork: turnForkSchema.optional() }).optional(),
  /** False: no profile in the prompt, no memory tools (use_memory false). Absent means true. */
  useMemory: z.boolean().optional(),
});
export type LlmStepInput = z.infer<typeof llmStepInputSchema>;

export const llmStepOutputSchema = z.object({
  /**
   * `answered`: the turn is committed and its stream ended; `tools`: run toolCalls, then the next round; `deleted`:
   * the conversation was deleted, nothing of the turn is kept, and the turn ends.
   */
  outcome: z.enum(['answered', 'tools', 'deleted']),
  nextSeq: z.number().int().positive(),
  /** Tool calls to run (their arguments are in the turn record); empty when the model answered. */
  toolCalls: z.array(z.object({ index: z.number().int().nonnegative(), name: z.string() })),
  finishReason: z.string(),
});
export type LlmStepOutput = z.infer<typeof llmStepOutputSchema>;

export const runToolInputSchema = turnRefSchema.extend({
  round: z.number().int().nonnegative(),
  index: z.number().int().nonnegative(),
  seq: z.number().int().positive(),
  /** False: memory tools refuse (use_memory false). Absent means true. */
  useMemory: z.boolean().optional(),
});
export type RunToolInput = z.infer<typeof runToolInputSchema>;

export const runToolOutputSchema = z.object({ isError: z.boolean() });
export type RunToolOutput = z.infer<typeof runToolOutputSchema>;

/** The turn could not be answered: keep the user's message and what was shown, and end the stream with `error`. */
export const failTurnInputSchema = turnRefSchema.extend({
  userText: z.string(),
  postedAt: z.string(),
  failure: turnFailureSchema,
  useMemory: z.boolean().optional(),
  /** The turn's fork (an edit or a regenerate): its failed message is kept on the branch it began. */
  fork: turnForkSchema.optional(),
});
export type FailTurnInput = z.infer<typeof failTurnInputSchema>;

// --- Idempotency of posted messages, per session -------------------------------------------------------------
// A client's chatMessageId is unique only within its session (DESIGN §6): every key derived from it names the
// session too, so one user, or one session, reusing an id never swallows or blocks another's message.

/** The `user-messages` message id: Service Bus duplicate detection is per queue, so it names the session. */
export function queuedMessageId(sessionId: string, chatMessageId: string): string {
  return `${sessionId}.${chatMessageId}`;
}

/** The id of a posted message's record in the `sessions` container (beside its session, in the owner's partition). */
export function postedMessageDocumentId(sessionId: string, chatMessageId: string): string {
  return `posted.${sessionId}.${chatMessageId}`;
}

/** What the front door remembers of an accepted message: enough to tell a re-post from a different message. */
export const postedMessageSchema = z.object({
  userId: userIdSchema,
  sessionId: z.string(),
  chatMessageId: z.string(),
  /** SHA-256 of the text (hex): a re-post is recognised without keeping the text twice. */
  textSha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** When it was first accepted; a re-post is re-published with it, so it is the same message. */
  postedAt: z.iso.datetime(),
  /** What it replaces (an edit or a regenerate): a re-post must replace the same turn to be the same message. */
  fork: turnForkSchema.optional(),
  /** Posted with use_memory false; a regenerate of it keeps the choice. Absent means true. */
  useMemory: z.literal(false).optional(),
});
export type PostedMessage = z.infer<typeof postedMessageSchema>;

export const postedMessageDocumentSchema = postedMessageSchema.extend({
  id: z.string(),
  kind: z.literal('posted-message'),
});
export type PostedMessageDocument = z.infer<typeof postedMessageDocumentSchema>;

/**
 * POST /api/chat's body limit in bytes. JSON may spell any UTF-16 unit of the text as a 6-byte `\uXXXX` escape
 * (a surrogate pair is two units, 12 bytes), and `question` may repeat the text: so the text limit, counted in
 * characters, is the one a client meets, never the byte limit. The rest is room for the ids and field names.
 */
export function chatBodyMaxBytes(maxTextChars: number): number {
  return maxTextChars * 6 * 2 + 4 * 1024;
}
