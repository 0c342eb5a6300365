// The Cosmos DB adapter of ConversationMessages (container `conversation-messages`, partition [userId, sessionId],
// id = messageId): one small item per message and the system prompt beside them; search over a user's messages
// queries the prefix partition [userId].
import type { Container, JSONObject, SqlQuerySpec } from '@azure/cosmos';
import { z } from 'zod';
import {
  cosmosFailure,
  cosmosStatus,
  deletePartitionItems,
  parseStored,
  queryItems,
  queryPages,
  readItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { MAIN_BRANCH } from '../../conversation/branches.js';
import {
  type ExchangeDocument,
  SYSTEM_PROMPT_ID,
  storedMessageSchema,
  type StoredMessage,
  systemPromptDocumentSchema,
  type SystemPromptDocument,
} from '../contracts.js';
import type { ConversationMessages } from '../conversation-messages.js';
import { exchangeDocument } from './cosmos-session-memory.js';
import { fullTextMatches, queryStems, queryWords, type FullTextMode } from '../../search/full-text.js';
import { mapBounded } from '../../bounded-parallel.js';
import { outsideGaps } from '../../cosmos/adapters/cosmos-gaps.js';
import { patchItem } from '../../cosmos/adapters/cosmos-patch.js';

/** Writes or deletes in flight at once for one call: enough to hide round trips, few enough to spare the RUs. */
const PARALLEL_WRITES = 20;
/** The words of a search sent to Cosmos DB. */
const MAX_SEARCH_WORDS = 16;
/** Items per page while searching: the search stops reading once it has `limit` sessions. */
const SEARCH_PAGE = 200;

export function createCosmosConversationMessages(
  container: Container,
  options: { fullText: FullTextMode },
): ConversationMessages {
  return {
    async put(messages, exchange) {
      // A turn's messages (one partition) and its index entry in one transactional batch; a redelivered turn's fail
      // it on their first create (409) and are written one by one below, each skipped where it is stored.
      const entry =
        exchange && messages[0] && exchangeDocument(messages[0].userId, messages[0].sessionId, exchange);
      if (await createAllAtOnce(container, messages, entry)) return messages.length;
      const [created] = await Promise.all([
        mapBounded(messages, PARALLEL_WRITES, async (message) => {
          try {
            await container.items.create(storedMessageSchema.parse(message));
            return 1;
          } catch (error) {
            // Already stored (a redelivered turn): an item is written once and never changes.
            if (cosmosStatus(error) === 409) return 0;
            throw cosmosFailure('storing a message of the conversation', error);
          }
        }),
        entry === undefined ? undefined : upsertExchange(container, entry),
      ]);
      return created.reduce((sum: number, one) => sum + one, 0);
    },

    async page(userId, sessionId, pageOptions) {
      const limit = Math.max(1, Math.floor(pageOptions.limit));
      const skip = outsideGaps('c.ordinal', pageOptions.skip ?? []);
      const query: SqlQuerySpec =
        pageOptions.order === 'asc'
          ? {
              query: `SELECT TOP @limit * FROM c WHERE c.kind = 'message' AND c.ordinal > @after${skip.sql} ORDER BY c.ordinal ASC`,
              parameters: [
                { name: '@limit', value: limit },
                { name: '@after', value: pageOptions.after ?? -1 },
                ...skip.parameters,
              ],
            }
          : {
              query: `SELECT TOP @limit * FROM c WHERE c.kind = 'message' AND c.ordinal < @before${skip.sql} ORDER BY c.ordinal DESC`,
              parameters: [
                { name: '@limit', value: limit },
                { name: '@before', value: pageOptions.before ?? Number.MAX_SAFE_INTEGER },
                ...skip.parameters,
              ],
            };
      return queryItems(
        container,
        query,
        [userId, sessionId],
        "the conversation's messages",
        storedMessageSchema,
      );
    },

    async get(userId, sessionId, messageId) {
      const where = [userId, sessionId];
      const read = await readItem(container, messageId, where, 'a message of the conversation', kindSchema);
      // The partition also holds the exchange entries and the digest: only a message is one.
      if (read?.resource.kind !== 'message') return undefined;
      return parseStored(storedMessageSchema, read.resource, 'a message');
    },

    async setFeedback(userId, sessionId, messageId, feedback) {
      // The one field of a message that changes after it is stored: patched alone, so nothing else is rewritten.
      const outcome = await patchItem(
        container,
        messageId,
        [userId, sessionId],
        [
          feedback === undefined
            ? { op: 'remove', path: '/feedback' }
            : { op: 'set', path: '/feedback', value: feedback },
        ],
        undefined,
        "an answer's feedback",
      );
      return outcome === 'patched' ? 'set' : 'missing';
    },

    async alternatives(userId, sessionId, groups) {
      if (groups.length === 0) return [];
      // One turn per alternative: its user message (a failed turn has no other). The groups are a page's turns.
      const query: SqlQuerySpec = {
        query:
          "SELECT c.chatMessageId, c.ordinal, c.branch.alternativeOf AS alternativeOf FROM c WHERE c.kind = 'message' AND c.role = 'user' AND ARRAY_CONTAINS(@groups, c.branch.alternativeOf) ORDER BY c.ordinal ASC",
        parameters: [{ name: '@groups', value: [...groups] }],
      };
      return queryItems(
        container,
        query,
        [userId, sessionId],
        "the conversation's alternatives",
        alternativeRowSchema,
      );
    },

    async newestOfBranch(userId, sessionId, branchId) {
      // Turns committed before branches carry none: they are the main line.
      const onBranch =
        branchId === MAIN_BRANCH
          ? '(c.branch.branchId = @branch OR NOT IS_DEFINED(c.branch))'
          : 'c.branch.branchId = @branch';
      const rows = await queryItems(
        container,
        {
          query: `SELECT TOP 1 c.chatMessageId, c.ordinal FROM c WHERE c.kind = 'message' AND ${onBranch} ORDER BY c.ordinal DESC`,
          parameters: [{ name: '@branch', value: branchId }],
        },
        [userId, sessionId],
        'the newest message of a branch',
        newestRowSchema,
      );
      return rows[0];
    },

    async sessionsMatching(userId, q, limit) {
      const max = Math.max(0, Math.floor(limit));
      if (max === 0) return [];
      const inProcess = options.fullText === 'in-process';
      const terms = (inProcess ? queryStems(q) : queryWords(q)).slice(0, MAX_SEARCH_WORDS);
      if (terms.length === 0) return [];
      const parameters = terms.map((term, i) => ({ name: `@t${i}`, value: term }));
      const names = terms.map((_, i) => `@t${i}`);
      // In process: the stems as substrings narrow the items (a superset), fullTextMatches decides.
      const query: SqlQuerySpec = inProcess
        ? {
            query: `SELECT c.sessionId, c.content FROM c WHERE c.kind = 'message' AND ${names.map((name) => `CONTAINS(LOWER(c.content), ${name})`).join(' AND ')}`,
            parameters,
          }
        : {
            query: `SELECT DISTINCT VALUE c.sessionId FROM c WHERE c.kind = 'message' AND FullTextContainsAll(c.content, ${names.join(', ')})`,
            parameters,
          };
      const found = new Set<string>();
      const pages = queryPages(
        container,
        query,
        { partitionKey: [userId], pageSize: SEARCH_PAGE },
        'the messages searched',
        inProcess ? searchedMessageSchema : matchedSessionSchema,
      );
      for await (const rows of pages)
        for (const row of rows) {
          // In process, each row is a candidate to decide; Cosmos DB's rows are the sessions it matched.
          if (typeof row !== 'string' && !fullTextMatches(row.content, q)) continue;
          found.add(typeof row === 'string' ? row : row.sessionId);
          if (found.size >= max) return [...found];
        }
      return [...found];
    },

    async putSystemPrompt(userId, sessionId, prompt) {
      const document: SystemPromptDocument = {
        content: prompt.content,
        personalised: prompt.personalised,
        createdAt: prompt.createdAt,
        id: SYSTEM_PROMPT_ID,
        kind: 'system-prompt',
        userId,
        sessionId,
      };
      try {
        await container.items.create(systemPromptDocumentSchema.parse(document));
      } catch (error) {
        // Stored already (a redelivered turn): the conversation's first prompt is written once.
        if (cosmosStatus(error) === 409) return;
        throw cosmosFailure("storing the conversation's system prompt", error);
      }
    },

    async getSystemPrompt(userId, sessionId) {
      const read = await readItem(
        container,
        SYSTEM_PROMPT_ID,
        [userId, sessionId],
        "the conversation's system prompt",
        systemPromptDocumentSchema,
      );
      if (read === undefined) return undefined;
      const { content, personalised, createdAt } = read.resource;
      return { content, personalised, createdAt };
    },

    deleteAll(userId, sessionId) {
      return deletePartitionItems(container, [userId, sessionId], "the conversation's items");
    },
  };
}

const kindSchema = z.looseObject({ kind: z.string() });
const alternativeRowSchema = z.object({
  chatMessageId: z.string(),
  ordinal: z.number().int().nonnegative(),
  alternativeOf: z.string(),
});
const newestRowSchema = z.object({ chatMessageId: z.string(), ordinal: z.number().int().nonnegative() });

/** A search's rows: in process, a message to decide on; from Cosmos DB, a session it matched. */
type SearchRow = string | { sessionId: string; content: string };
const searchedMessageSchema: z.ZodType<SearchRow> = z.object({ sessionId: z.string(), content: z.string() });
const matchedSessionSchema: z.ZodType<SearchRow> = z.string();

/** Cosmos DB's limit on the operations of one transactional batch. */
const MAX_BATCH = 100;

/** The exchange's index entry on its own (a turn whose messages could not go in one batch). */
async function upsertExchange(container: Container, entry: ExchangeDocument): Promise<void> {
  try {
    // Not `return=minimal`: the SDK's upsert, like its create, reads the item's id from the answer.
    await container.items.upsert(entry);
  } catch (error) {
    throw cosmosFailure("storing an exchange's index entry", error);
  }
}

/**
 * Creates the messages, all in one partition, and upserts the exchange's entry, with one transactional batch: true
 * when all were written; false when the batch does not apply (one item, several partitions, too many) or failed on
 * a message already stored (409).
 */
async function createAllAtOnce(
  container: Container,
  messages: readonly StoredMessage[],
  exchange: ExchangeDocument | undefined,
): Promise<boolean> {
  const first = messages[0];
  const items = messages.length + (exchange === undefined ? 0 : 1);
  if (first === undefined || items < 2 || items > MAX_BATCH) return false;
  if (messages.some((message) => message.userId !== first.userId || message.sessionId !== first.sessionId))
    return false;
  let response;
  try {
    response = await container.items.batch(
      [
        ...messages.map((message) => ({
          operationType: 'Create' as const,
          // Plain JSON once parsed: an optional field is absent, never undefined.
          resourceBody: storedMessageSchema.parse(message) as unknown as JSONObject,
        })),
        ...(exchange === undefined
          ? []
          : [{ operationType: 'Upsert' as const, resourceBody: exchange as unknown as JSONObject }]),
      ],
      [first.userId, first.sessionId],
      { contentResponseOnWriteEnabled: false },
    );
  } catch (error) {
    throw cosmosFailure("storing the conversation's messages", error);
  }
  const failed = (response.result ?? []).find(
    (result) => result.statusCode >= 400 && result.statusCode !== 424,
  );
  if (failed === undefined && response.code !== undefined && response.code < 300) return true;
  if (failed?.statusCode === 409) return false;
  throw cosmosFailure(
    "storing the conversation's messages",
    new Error(`the batch answered ${failed?.statusCode ?? response.code ?? 'nothing'}`),
  );
}
