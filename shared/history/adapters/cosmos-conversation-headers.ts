// The Cosmos DB adapter of ConversationHeaders (container `conversations`, partition userId, id = sessionId): each
// change patches its writer's fields, conditioned where a late or repeated write must not win; the list is one
// single-partition query newest first, paged behind our opaque token.
import type { Container, PatchOperation, SqlParameter, SqlQuerySpec } from '@azure/cosmos';
import { z } from 'zod';
import {
  cosmosFailure,
  cosmosStatus,
  deleteItem,
  parseStored,
  queryItems,
  readItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { conversationHeaderSchema, type ConversationHeader } from '../contracts.js';
import {
  newConversationHeader,
  type ConversationHeaders,
  type HeaderListOptions,
  type HeaderTouch,
} from '../conversation-headers.js';
import { fullTextMatches, queryStems, queryWords, type FullTextMode } from '../../search/full-text.js';
import { conditionNumber, patchItem } from '../../cosmos/adapters/cosmos-patch.js';
import { listKey, readListPage } from '../../cosmos/adapters/list-pages.js';

/** The words of a search sent to Cosmos DB; more add cost and hardly narrow a title search. */
const MAX_SEARCH_WORDS = 16;

/**
 * A header as stored: with the delete's mark, and its resource id (`_rid`), which Cosmos DB gives each item it
 * creates: a header made again under the same id after a delete has another.
 */
const storedHeaderSchema = conversationHeaderSchema.extend({
  deleting: z.string().optional(),
  _rid: z.string(),
});

/** A resource id written into a condition (which takes no parameters): Cosmos DB's are base64. */
function ridLiteral(rid: string): string {
  if (!/^[A-Za-z0-9+/=]+$/.test(rid)) throw new Error(`Not a Cosmos DB resource id: '${rid}'.`);
  return `'${rid}'`;
}

export function createCosmosConversationHeaders(
  container: Container,
  options: { fullText: FullTextMode },
): ConversationHeaders {
  const what = 'the conversation header';

  /** Moves the live fields forward unless the stored header already counts more messages. */
  async function patchLive(touch: HeaderTouch): Promise<'patched' | 'unmet' | 'missing'> {
    const operations: PatchOperation[] = [
      { op: 'set', path: '/lastActivity', value: touch.lastActivity },
      { op: 'set', path: '/messageCount', value: touch.messageCount },
      { op: 'set', path: '/preview', value: touch.preview },
      ...(touch.path ? [{ op: 'set', path: '/path', value: touch.path } satisfies PatchOperation] : []),
      // Only ever set: a later commit on an unbranched path does not make the conversation unbranched.
      ...(touch.branched ? [{ op: 'set', path: '/branched', value: true } satisfies PatchOperation] : []),
    ];
    const condition = `FROM c WHERE c.messageCount <= ${conditionNumber(touch.messageCount)}`;
    return patchItem(container, touch.sessionId, touch.userId, operations, condition, what);
  }

  async function read(userId: string, sessionId: string) {
    const stored = await readItem(container, sessionId, userId, what, storedHeaderSchema);
    if (stored?.resource.userId !== userId || stored.resource.deleting !== undefined) return undefined;
    const { deleting: _deleting, _rid, ...header } = stored.resource;
    return { header, incarnation: _rid };
  }

  return {
    async get(userId, sessionId) {
      return (await read(userId, sessionId))?.header;
    },

    read,

    async touch(touch) {
      // One round trip a commit: the first turn creates the header, every later one patches it (and creates it
      // only if it is missing after all).
      if (!touch.opensConversation && (await patchLive(touch)) !== 'missing') return;
      try {
        await container.items.create(newConversationHeader(touch));
        return;
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw cosmosFailure(`creating ${what}`, error);
      }
      // Another commit of the same conversation created it meanwhile: move it forward as usual ('missing' now
      // means it was deleted since, which a late touch must not undo).
      await patchLive(touch);
    },

    async recordPersisted(userId, sessionId, turn) {
      const operations: PatchOperation[] = [
        { op: 'set', path: '/persistedCount', value: turn.upTo },
        { op: 'set', path: '/persistedAt', value: turn.at },
        { op: 'incr', path: '/tokens/prompt', value: turn.tokens.prompt },
        { op: 'incr', path: '/tokens/completion', value: turn.tokens.completion },
        { op: 'incr', path: '/tokens/total', value: turn.tokens.total },
        // Creates the field on a header stored before it existed (which reads it as 0).
        { op: 'incr', path: '/textTokens', value: turn.textTokens },
      ];
      // The tokens are added once: a redelivered turn finds persistedCount already at its end. A header marked by a
      // delete, or made again since the caller read it, is left as it is: the caller's turn is not to be recorded.
      const clauses = [`c.persistedCount < ${conditionNumber(turn.upTo)}`, 'NOT IS_DEFINED(c.deleting)'];
      if (turn.incarnation !== undefined) clauses.push(`c._rid = ${ridLiteral(turn.incarnation)}`);
      const condition = `FROM c WHERE ${clauses.join(' AND ')}`;
      const patched = await patchItem(container, sessionId, userId, operations, condition, what);
      return patched === 'patched' ? 'recorded' : patched === 'unmet' ? 'already-recorded' : 'missing';
    },

    async setTitle(userId, sessionId, title, source) {
      const operations: PatchOperation[] = [
        { op: 'set', path: '/title', value: title },
        { op: 'set', path: '/titleSource', value: source },
      ];
      // A model's title never replaces the user's, even one the user set a moment before this write.
      const condition = source === 'model' ? "FROM c WHERE c.titleSource != 'user'" : undefined;
      const patched = await patchItem(container, sessionId, userId, operations, condition, what);
      return patched === 'patched' ? 'set' : patched === 'unmet' ? 'kept' : 'missing';
    },

    async setPath(userId, sessionId, change) {
      const operations: PatchOperation[] = [
        { op: 'set', path: '/path', value: change.path },
        { op: 'set', path: '/preview', value: change.preview },
      ];
      // A commit that landed after the switch moved working memory names the newer path: it stays.
      const condition = `FROM c WHERE c.messageCount <= ${conditionNumber(change.messageCount)}`;
      const patched = await patchItem(container, sessionId, userId, operations, condition, what);
      return patched === 'patched' ? 'set' : patched === 'unmet' ? 'moved' : 'missing';
    },

    async setProject(userId, sessionId, projectId) {
      const what = "a conversation's project";
      if (projectId !== null)
        return (
          (await patchItem(
            container,
            sessionId,
            userId,
            [{ op: 'set', path: '/projectId', value: projectId }],
            undefined,
            what,
          )) !== 'missing'
        );
      // Removing a property that is not there fails: only a filed conversation is patched.
      const patched = await patchItem(
        container,
        sessionId,
        userId,
        [{ op: 'remove', path: '/projectId' }],
        'FROM c WHERE IS_DEFINED(c.projectId)',
        what,
      );
      return patched !== 'missing';
    },

    async list(userId, listOptions) {
      const key = listKey([userId, listOptions.match?.q ?? null, listOptions.projectId ?? null]);
      const query = inProject(listQuery(listOptions.match, options.fullText), listOptions.projectId);
      if (query === undefined) return { headers: [] };
      const keep = (header: ConversationHeader) =>
        options.fullText === 'cosmos' ||
        listOptions.match === undefined ||
        listOptions.match.sessionIds.includes(header.sessionId) ||
        fullTextMatches(header.title, listOptions.match.q);

      const page = await readListPage(container, {
        query,
        partitionKey: userId,
        limit: listOptions.limit,
        ...(listOptions.continuationToken === undefined
          ? {}
          : { continuationToken: listOptions.continuationToken }),
        list: key,
        parse: parseHeaders,
        keep,
        what: 'listing conversations',
      });
      return page.continuationToken === undefined
        ? { headers: page.items }
        : { headers: page.items, continuationToken: page.continuationToken };
    },

    async totals(userId) {
      const query =
        "SELECT COUNT(1) AS conversations, SUM(c.messageCount) AS messages, SUM(c.tokens.prompt) AS prompt, SUM(c.tokens.completion) AS completion, SUM(c.tokens.total) AS total FROM c WHERE c.kind = 'conversation'";
      const rows = await queryItems(container, { query }, userId, 'the conversation totals', totalsRowSchema);
      // One row in a single partition; partial rows (a long-running aggregate) add up to the same.
      const sum = (field: keyof z.infer<typeof totalsRowSchema>) =>
        rows.reduce((total, row) => total + (row[field] ?? 0), 0);
      return {
        conversations: sum('conversations'),
        messages: sum('messages'),
        tokens: { prompt: sum('prompt'), completion: sum('completion'), total: sum('total') },
      };
    },

    async markDeleting(userId, sessionId) {
      // A set, never removed by the other patches (they set their own fields): only the header's removal ends it.
      const operations: PatchOperation[] = [
        { op: 'set', path: '/deleting', value: new Date().toISOString() },
      ];
      return (await patchItem(container, sessionId, userId, operations, undefined, what)) !== 'missing';
    },

    delete(userId, sessionId) {
      return deleteItem(container, sessionId, userId, what);
    },
  };
}

const totalsRowSchema = z.object({
  conversations: z.number().optional(),
  messages: z.number().optional(),
  prompt: z.number().optional(),
  completion: z.number().optional(),
  total: z.number().optional(),
});

/** The query narrowed to the conversations filed in a project (before its ORDER BY). */
function inProject(query: SqlQuerySpec | undefined, projectId: string | undefined): SqlQuerySpec | undefined {
  if (query === undefined || projectId === undefined) return query;
  return {
    query: query.query.replace(' ORDER BY ', ' AND c.projectId = @projectId ORDER BY '),
    parameters: [...(query.parameters ?? []), { name: '@projectId', value: projectId }],
  };
}

function parseHeaders(resources: unknown[]): ConversationHeader[] {
  return parseStored(z.array(conversationHeaderSchema), resources, 'conversation headers');
}

/**
 * The list's query, newest activity first. With a search: Cosmos DB's full-text search on the title, or (in
 * process) a narrowing on the stems as substrings that the caller completes with fullTextMatches; either way a
 * conversation whose messages matched (`sessionIds`) is in. Undefined when nothing can match.
 */
function listQuery(match: HeaderListOptions['match'], mode: FullTextMode): SqlQuerySpec | undefined {
  const base = "SELECT * FROM c WHERE c.kind = 'conversation'";
  const order = 'ORDER BY c.lastActivity DESC';
  if (match === undefined) return { query: `${base} ${order}` };
  const terms = (mode === 'cosmos' ? queryWords(match.q) : queryStems(match.q)).slice(0, MAX_SEARCH_WORDS);
  const parameters: SqlParameter[] = terms.map((term, i) => ({ name: `@t${i}`, value: term }));
  const titleMatches =
    terms.length === 0
      ? undefined
      : mode === 'cosmos'
        ? `FullTextContainsAll(c.title, ${terms.map((_, i) => `@t${i}`).join(', ')})`
        : `(${terms.map((_, i) => `CONTAINS(LOWER(c.title), @t${i})`).join(' AND ')})`;
  const sessionMatches =
    match.sessionIds.length === 0 ? undefined : 'ARRAY_CONTAINS(@sessionIds, c.sessionId)';
  if (sessionMatches !== undefined) parameters.push({ name: '@sessionIds', value: [...match.sessionIds] });
  const either = [titleMatches, sessionMatches].filter((clause) => clause !== undefined);
  if (either.length === 0) return undefined;
  return { query: `${base} AND (${either.join(' OR ')}) ${order}`, parameters };
}
