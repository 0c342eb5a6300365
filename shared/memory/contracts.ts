// The memory area's contracts: long-term memory across conversations. Its documents (one summary per conversation,
// the profile as individual facts with provenance and validity), HTTP bodies, tool arguments and limits are
// declared here; the worker consumes `message-completed` (shared/conversation/message-completed.ts).
import { z } from 'zod';
import { ordinalGapSchema } from '../conversation/branches.js';
import { userIdSchema } from '../ids.js';
import { memoryScopeSchema } from '../conversation/memory-scope.js';
import { englishText, type ContainerSpec, type VectorEmbeddingSpec } from '../cosmos/container-spec.js';

/**
 * The subscription of `message-completed` the memory worker reads. Sessions on: a conversation's turns are
 * consolidated in order, so its summary grows turn by turn.
 */
export const MEMORY_SUBSCRIPTION = 'memory';

export const CONVERSATION_SUMMARIES_CONTAINER = 'conversation-summaries';
export const PROFILE_FACTS_CONTAINER = 'profile-facts';

/** The summaries' embedding, under the name the memory API shows it by (`vector_embedding`). */
const SUMMARY_EMBEDDING: VectorEmbeddingSpec = {
  path: '/vector_embedding',
  dataType: 'float32',
  distanceFunction: 'cosine',
};

export const memoryContainers: readonly ContainerSpec[] = [
  {
    id: CONVERSATION_SUMMARIES_CONTAINER,
    partitionKeyPaths: ['/userId'],
    vectorEmbeddings: [SUMMARY_EMBEDDING],
    vectorIndexes: [{ path: SUMMARY_EMBEDDING.path, type: 'quantizedFlat' }],
    fullTextPaths: [englishText('/summary')],
    purpose:
      "Long-term memory: a summary of each past conversation (themes, persons, places, sentiment) with its embedding, searched within one user's summaries by vector, full text or both (hybrid).",
  },
  {
    id: PROFILE_FACTS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    // Only items that set their own `ttl` expire (none does now: consolidation records stay while their
    // conversation exists, since a branch may come back). -1 keeps per-item expiry possible without a migration.
    defaultTtlSeconds: -1,
    purpose:
      "Long-term memory: the user's structured profile, one item per fact (preference, interest, knowledge, goal, ...) with its provenance and validity, and the record of what each turn changed in it.",
  },
];

// --- Limits -----------------------------------------------------------------------------------------------

/** The profile fetch of a new conversation's turn gives up after 2 s; the turn goes on without it. */
export const PROFILE_FETCH_BUDGET_MS = 2_000;
/** Facts the profile holds at once (active); the merge replaces or retracts to stay under it. */
export const MAX_ACTIVE_FACTS = 200;
/** A fact's statement, in characters. */
export const MAX_FACT_CHARS = 300;
/** A conversation summary, in characters. */
export const MAX_SUMMARY_CHARS = 2_000;
/** Themes, persons, places: entries each, and characters per entry. */
export const MAX_SUMMARY_LIST = 12;
export const MAX_SUMMARY_LIST_ITEM_CHARS = 80;
/** Search: results per query, and the query's length. */
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 20;
export const MAX_SEARCH_QUERY_CHARS = 1_000;
/** Summaries per page of GET .../memories. */
export const DEFAULT_SUMMARY_PAGE = 50;
export const MAX_SUMMARY_PAGE = 200;

// --- The profile (the user's memories, kept as one item per fact) --------------------------------------------

/** The profile's attributes (what kind of thing a fact says about the user); each fact belongs to one. */
export const profileCategorySchema = z.enum([
  'output_preferences',
  'personal_preferences',
  'assistant_preferences',
  'knowledge',
  'interests',
  'dislikes',
  'family_and_friends',
  'work_profile',
  'goals',
]);
export type ProfileCategory = z.infer<typeof profileCategorySchema>;
export const PROFILE_CATEGORIES = profileCategorySchema.options;

/** Where a fact was said: the user's message in a conversation. */
export const factSourceSchema = z.object({
  sessionId: z.string(),
  chatMessageId: z.string(),
  /** `${chatMessageId}_user`. */
  messageId: z.string(),
  /** When the user said it (the message's timestamp). */
  at: z.iso.datetime(),
  /**
   * The message's place in its conversation: a turn's branch (conversation/branches.ts) tells by ordinals
   * which turns its path holds. Absent on sources recorded before branches existed.
   */
  ordinal: z.number().int().nonnegative().optional(),
});
export type FactSource = z.infer<typeof factSourceSchema>;

/**
 * - `active`: true now, rendered into prompts;
 * - `superseded`: replaced by a newer fact (`supersededBy`), kept with when (`validUntil`) and why (`changeReason`);
 * - `retracted`: contradicted by the user with nothing to replace it, kept with when and why.
 */
export const factStatusSchema = z.enum(['active', 'superseded', 'retracted']);
export type FactStatus = z.infer<typeof factStatusSchema>;

/** A fact of the user's profile (container `profile-facts`, partition userId, id = factId). */
export const profileFactSchema = z.object({
  id: z.string(),
  kind: z.literal('fact'),
  userId: userIdSchema,
  category: profileCategorySchema,
  /** Where it lives: an assistant's own memory or a project's; absent, the user's shared memory (memory-scope.ts). */
  scope: memoryScopeSchema.optional(),
  /** The fact in one sentence about the user, e.g. "Prefers answers as bullet points." */
  statement: z.string().min(1).max(MAX_FACT_CHARS),
  status: factStatusSchema,
  /** When it became true: when the user first said it. */
  validFrom: z.iso.datetime(),
  /** When it stopped being true (superseded or retracted). */
  validUntil: z.iso.datetime().optional(),
  /** The fact that replaced it. */
  supersededBy: z.string().optional(),
  /** Why it was superseded or retracted, in the model's words. */
  changeReason: z.string().optional(),
  /** Every message that stated (or restated) it, oldest first; never empty. */
  provenance: z.array(factSourceSchema).min(1),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type ProfileFact = z.infer<typeof profileFactSchema>;

/**
 * One change a turn makes to the profile, as the merge decided it. Fact ids of new facts are chosen when the
 * change is decided, so applying it again writes the same items.
 */
export const profileChangeSchema = z.discriminatedUnion('op', [
  z.object({
    op: z.literal('add'),
    factId: z.string(),
    category: profileCategorySchema,
    statement: z.string().min(1).max(MAX_FACT_CHARS),
  }),
  /** The user said again what an active fact says: the message joins its provenance. */
  z.object({ op: z.literal('reaffirm'), factId: z.string() }),
  z.object({
    op: z.literal('replace'),
    factId: z.string(),
    newFactId: z.string(),
    category: profileCategorySchema,
    statement: z.string().min(1).max(MAX_FACT_CHARS),
    reason: z.string(),
  }),
  z.object({ op: z.literal('retract'), factId: z.string(), reason: z.string() }),
]);
export type ProfileChange = z.infer<typeof profileChangeSchema>;

// --- Conversation summaries (one per conversation) -----------------------------------------------------------

export const userSentimentSchema = z.enum(['positive', 'neutral', 'negative', 'mixed']);

/** What the model writes about a conversation (the stored summary's fields, without the embedding and timestamp). */
export const summaryContentSchema = z.object({
  summary: z.string().min(1).max(MAX_SUMMARY_CHARS),
  themes: z.array(z.string().max(MAX_SUMMARY_LIST_ITEM_CHARS)).max(MAX_SUMMARY_LIST),
  persons: z.array(z.string().max(MAX_SUMMARY_LIST_ITEM_CHARS)).max(MAX_SUMMARY_LIST),
  places: z.array(z.string().max(MAX_SUMMARY_LIST_ITEM_CHARS)).max(MAX_SUMMARY_LIST),
  user_sentiment: userSentimentSchema,
});
export type SummaryContent = z.infer<typeof summaryContentSchema>;

/** A conversation's summary at one turn, without its embedding: what a consolidation record keeps of it. */
export const summarySnapshotSchema = summaryContentSchema.extend({
  /** The exchanges it covers. */
  exchanges: z.number().int().nonnegative(),
});
export type SummarySnapshot = z.infer<typeof summarySnapshotSchema>;

/**
 * A conversation's summary (container `conversation-summaries`, partition userId, id = sessionId): one per
 * conversation, rewritten as it grows, never duplicated.
 */
export const conversationSummaryDocumentSchema = summaryContentSchema.extend({
  id: z.string(),
  kind: z.literal('conversation-summary'),
  userId: userIdSchema,
  sessionId: z.string(),
  /** Where it lives, as its conversation's facts do; absent, the user's shared memory. */
  scope: memoryScopeSchema.optional(),
  /** When the summary was last written. */
  timestamp: z.iso.datetime(),
  /** The embedding of `summary`, of the configured embedding model's length. */
  vector_embedding: z.array(z.number()),
  /** The highest ordinal of the messages it covers: a turn at or below it is already in. */
  coveredThrough: z.number().int().nonnegative(),
  /** The exchanges it covers. */
  exchanges: z.number().int().nonnegative(),
  createdAt: z.iso.datetime(),
  /**
   * The newest turn it covers (absent on summaries written before branches existed): a turn that follows it on the
   * same path goes on from this summary as it is; any other turn first makes memory follow its own path.
   */
  chatMessageId: z.string().optional(),
  /**
   * The gaps of that turn's path (conversation/branches.ts): the path long-term memory follows. Absent: the
   * main line, with none (also on summaries written before branches existed).
   */
  gaps: z.array(ordinalGapSchema).optional(),
});
export type ConversationSummaryDocument = z.infer<typeof conversationSummaryDocumentSchema>;

/** A summary as the API, MCP and tools show it: no vector, no bookkeeping. */
export const conversationSummaryViewSchema = summaryContentSchema.extend({
  sessionId: z.string(),
  /** Where it lives: `user`, `assistant:<id>` or `project:<id>`. */
  scope: memoryScopeSchema.optional(),
  timestamp: z.string(),
  createdAt: z.string(),
});
export type ConversationSummaryView = z.infer<typeof conversationSummaryViewSchema>;

// --- Consolidation records -------------------------------------------------------------------------------

/**
 * What a turn changed in the profile (container `profile-facts`, id = consolidationId(sessionId, chatMessageId)):
 * written before the changes are applied, so a redelivered turn applies the same changes, never new ones. It is
 * also the turn's place in the memory of its conversation's branches, so it stays while the conversation exists
 * (a small item per consolidated turn, removed with the conversation): when a later turn is on a path without it
 * (an edit or regenerate of it or of a turn before it), its changes are withdrawn, and when a turn comes back to
 * its path they are applied again; and the conversation's summary as it stood after it is where a turn that
 * follows it on a new branch starts its summary from.
 */
export const consolidationRecordSchema = z.object({
  id: z.string(),
  kind: z.literal('consolidation'),
  userId: userIdSchema,
  sessionId: z.string(),
  chatMessageId: z.string(),
  /** The scope its new facts are written to (its turn's); absent, the user's shared memory. */
  scope: memoryScopeSchema.optional(),
  /** The user's message the changes came from (its ordinal places the record on paths). */
  source: factSourceSchema,
  changes: z.array(profileChangeSchema),
  createdAt: z.iso.datetime(),
  /** Set once every change is applied. */
  appliedAt: z.iso.datetime().optional(),
  /** The conversation's summary as it stood after this turn, on its path (absent when there was none). */
  summaryAfter: summarySnapshotSchema.optional(),
  /** Set while its changes are withdrawn: the conversation went on along a path without this turn. */
  withdrawnAt: z.iso.datetime().optional(),
});
export type ConsolidationRecord = z.infer<typeof consolidationRecordSchema>;

export function consolidationId(sessionId: string, chatMessageId: string): string {
  return `consolidation.${sessionId}.${chatMessageId}`;
}

// --- Search -----------------------------------------------------------------------------------------------

/** One conversation found by search_conversation_history, POST .../conversations/search and the MCP search tool. */
export const conversationSearchHitSchema = conversationSummaryViewSchema.extend({
  /** The conversation's title from its history header (absent when it has none). */
  title: z.string().optional(),
  /** The conversation's date: its summary's timestamp. */
  date: z.string(),
  /**
   * Relevance, higher is better: the reciprocal-rank-fusion score of the vector and full-text ranks (hybrid),
   * comparable within one result list only.
   */
  score: z.number(),
  /** The cosine similarity of the query to the summary (-1..1). */
  similarity: z.number(),
});
export type ConversationSearchHit = z.infer<typeof conversationSearchHitSchema>;

/** POST /api/memory/users/{userId}/conversations/search's answer. */
export const conversationSearchResultsSchema = z.object({ results: z.array(conversationSearchHitSchema) });

// --- What the Memory API answers --------------------------------------------------------------------------

/** A fact as the API and MCP show it: its provenance and validity, without the store's bookkeeping. */
export const profileFactViewSchema = profileFactSchema
  .omit({ id: true, kind: true, userId: true })
  .extend({ factId: z.string() });
export type ProfileFactView = z.infer<typeof profileFactViewSchema>;

/** GET /api/memory/users/{userId}/memories. */
export const memoriesPageSchema = z.object({
  /** Every fact of the user (or the active ones with status=active), oldest first, on every page. */
  facts: z.array(profileFactViewSchema),
  /** A page of the conversation summaries, newest first. */
  summaries: z.array(conversationSummaryViewSchema),
  continuationToken: z.string().optional(),
});
export type MemoriesPage = z.infer<typeof memoriesPageSchema>;

export const searchQuerySchema = z
  .string({ error: 'must be a string' })
  .refine((value) => value.trim() !== '', 'must not be empty')
  .refine(
    (value) => value.length <= MAX_SEARCH_QUERY_CHARS,
    `must be at most ${MAX_SEARCH_QUERY_CHARS} characters`,
  );

export const searchLimitSchema = z
  .number({ error: 'must be a number' })
  .int('must be an integer')
  .min(1, 'must be at least 1')
  .max(MAX_SEARCH_LIMIT, `must be at most ${MAX_SEARCH_LIMIT}`);

/** POST /api/memory/users/{userId}/conversations/search. */
export const conversationSearchBodySchema = z.object(
  { query: searchQuerySchema, limit: searchLimitSchema.default(DEFAULT_SEARCH_LIMIT) },
  { error: 'the body must be a JSON object' },
);

/** The arguments of the tool search_conversation_history. */
export const searchConversationHistoryArgsSchema = z.object({
  search_query: searchQuerySchema,
  limit: searchLimitSchema.default(DEFAULT_SEARCH_LIMIT),
});
export const SEARCH_CONVERSATION_HISTORY_TOOL = 'search_conversation_history';

/** What the memory worker tells a user's open pages (a Web PubSub message to the user) once a turn changed memory. */
export const memoryChangedSchema = z.object({
  type: z.literal('memory-changed'),
  /** The conversation whose turn changed it. */
  sessionId: z.string(),
  chatMessageId: z.string(),
  /** What changed: the conversation's summary, the profile's facts. */
  summary: z.boolean(),
  profile: z.boolean(),
});
export type MemoryChanged = z.infer<typeof memoryChangedSchema>;
