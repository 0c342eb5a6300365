// The Cosmos DB adapter of SessionMemory: a conversation's exchange index entries, its rolling digest (read on the
// version last seen, written on the version read) and the digest's checkpoints, beside its messages in
// `conversation-messages` (partition [userId, sessionId]).
import type { Container, SqlQuerySpec } from '@azure/cosmos';
import {
  cosmosFailure,
  cosmosStatus,
  queryItems,
  queryPages,
  readItem,
  readThroughCache,
  StoredItemCache,
  type StoredItem,
} from '../../cosmos/adapters/cosmos-items.js';
import {
  digestCheckpointDocumentSchema,
  digestCheckpointId,
  digestCheckpointSchema,
  exchangeDocumentId,
  exchangeDocumentSchema,
  exchangeEntrySchema,
  SESSION_DIGEST_ID,
  sessionDigestDocumentSchema,
  type DigestCheckpointDocument,
  type ExchangeDocument,
  type ExchangeEntry,
  type SessionDigest,
  type SessionDigestDocument,
} from '../contracts.js';
import { exchangeIsAbout } from '../../search/full-text.js';
import type { SessionMemory, StoredDigest } from '../session-memory.js';
import { writeOnVersion } from '../../cosmos/adapters/cosmos-patch.js';
import { outsideGaps } from '../../cosmos/adapters/cosmos-gaps.js';

/** Entries per page while looking for a topic: the lookup stops reading once it has `limit`. */
const FIND_PAGE = 100;

/** An exchange's index entry as its item (the messages adapter writes it with the turn's messages too). */
export function exchangeDocument(userId: string, sessionId: string, entry: ExchangeEntry): ExchangeDocument {
  return {
    ...exchangeEntrySchema.parse(entry),
    id: exchangeDocumentId(entry.exchangeId),
    kind: 'exchange',
    userId,
    sessionId,
  };
}

export function createCosmosSessionMemory(
  container: Container,
  options: { cachedSessions?: number } = {},
): SessionMemory {
  const digests = new StoredItemCache<SessionDigestDocument>(options.cachedSessions ?? 1_000);

  return {
    async putExchange(userId, sessionId, entry) {
      const document = exchangeDocument(userId, sessionId, entry);
      try {
        // Not `return=minimal`: the SDK's upsert, like its create, reads the item's id from the answer.
        await container.items.upsert(document);
      } catch (error) {
        throw cosmosFailure("storing an exchange's index entry", error);
      }
    },

    async getExchange(userId, sessionId, exchangeId) {
      const read = await readItem(
        container,
        exchangeDocumentId(exchangeId),
        [userId, sessionId],
        "an exchange's index entry",
        exchangeDocumentSchema,
      );
      return read === undefined ? undefined : toEntry(read.resource);
    },

    async findExchanges(userId, sessionId, topic, limit, path) {
      const max = Math.max(0, Math.floor(limit));
      if (max === 0) return [];
      // A conversation has as many entries as exchanges, each a line: reading their lines newest first and
      // matching here answers alike in Azure and on the local server (which has no full-text functions).
      const skip = outsideGaps('c.ordinal', path?.skip ?? []);
      const query: SqlQuerySpec = {
        query: `SELECT c.exchangeId, c.ordinal, c.line, c.tags, c.at FROM c WHERE c.kind = 'exchange'${skip.sql} ORDER BY c.ordinal DESC`,
        parameters: skip.parameters,
      };
      const found: ExchangeEntry[] = [];
      const pages = queryPages(
        container,
        query,
        { partitionKey: [userId, sessionId], pageSize: FIND_PAGE },
        "the conversation's exchange entries",
        exchangeEntrySchema,
      );
      for await (const entries of pages)
        for (const entry of entries) {
          if (!exchangeIsAbout(entry, topic)) continue;
          found.push(entry);
          if (found.length >= max) return found;
        }
      return found;
    },

    async pathExchanges(userId, sessionId, path) {
      const skip = outsideGaps('c.ordinal', path.skip);
      return queryItems(
        container,
        {
          query: `SELECT TOP @limit c.exchangeId, c.ordinal, c.line, c.tags, c.at FROM c WHERE c.kind = 'exchange' AND c.ordinal < @before${skip.sql} ORDER BY c.ordinal DESC`,
          parameters: [
            { name: '@limit', value: Math.max(1, Math.floor(path.limit)) },
            { name: '@before', value: path.before },
            ...skip.parameters,
          ],
        },
        [userId, sessionId],
        "the path's exchange entries",
        exchangeEntrySchema,
      );
    },

    async putCheckpoint(userId, sessionId, checkpoint) {
      const document: DigestCheckpointDocument = {
        ...digestCheckpointSchema.parse(checkpoint),
        id: digestCheckpointId(checkpoint.summarizedThrough),
        kind: 'digest-checkpoint',
        userId,
        sessionId,
      };
      try {
        await container.items.create(document);
      } catch (error) {
        // Stored already (a redelivered fold, or another path's fold of the same messages): the first stays.
        if (cosmosStatus(error) === 409) return;
        throw cosmosFailure("storing a checkpoint of the conversation's digest", error);
      }
    },

    async latestCheckpoint(userId, sessionId, path) {
      const skip = outsideGaps('c.lastOrdinal', path.skip);
      const [found] = await queryItems(
        container,
        {
          query: `SELECT TOP 1 * FROM c WHERE c.kind = 'digest-checkpoint' AND c.summarizedThrough <= @before${skip.sql} ORDER BY c.summarizedThrough DESC`,
          parameters: [{ name: '@before', value: path.before }, ...skip.parameters],
        },
        [userId, sessionId],
        "the digest's checkpoints",
        digestCheckpointDocumentSchema,
      );
      if (found === undefined) return undefined;
      const { summary, summarizedThrough, lastOrdinal, gaps, createdAt } = found;
      return { summary, summarizedThrough, lastOrdinal, gaps, createdAt };
    },

    async getDigest(userId, sessionId, known) {
      const key = digestKey(userId, sessionId);
      // A digest's revision is marked in working memory before it is written: the one held, if it is that revision,
      // is the newest (or one still being written, which a read could not give either).
      const held = known?.revision === undefined ? undefined : digests.get(key);
      if (held !== undefined && held.resource.revision === known?.revision) return toStoredDigest(held);
      const current = await readThroughCache(
        digests,
        key,
        container,
        SESSION_DIGEST_ID,
        [userId, sessionId],
        "the conversation's digest",
        sessionDigestDocumentSchema,
      );
      return current === undefined ? undefined : toStoredDigest(current);
    },

    async putDigest(userId, sessionId, digest, version) {
      const key = digestKey(userId, sessionId);
      const document: SessionDigestDocument = {
        ...digest,
        id: SESSION_DIGEST_ID,
        kind: 'digest',
        userId,
        sessionId,
      };
      const written = await writeOnVersion(
        container,
        document,
        [userId, sessionId],
        version,
        "the conversation's digest",
      );
      if (written === 'conflict') {
        digests.delete(key);
        return 'conflict';
      }
      digests.set(key, { resource: structuredClone(document), etag: written.etag });
      return 'written';
    },
  };
}

function toEntry(document: ExchangeDocument): ExchangeEntry {
  const { exchangeId, ordinal, line, tags, at } = document;
  return { exchangeId, ordinal, line, tags: [...tags], at };
}

function toStoredDigest(item: StoredItem<SessionDigestDocument>): StoredDigest {
  const { summary, summarizedThrough, summarizedTokens, recentExchanges, updatedAt, gaps, revision } =
    item.resource;
  const digest: SessionDigest = {
    summary,
    summarizedThrough,
    summarizedTokens,
    recentExchanges,
    updatedAt,
    gaps,
    // The next write counts on from it; without it every digest would be revision 1, and a process holding an old
    // one would take it for the newest.
    ...(revision === undefined ? {} : { revision }),
  };
  // A copy: the caller may change what it was given without changing what this process remembers.
  return { digest: structuredClone(digest), version: item.etag };
}

function digestKey(userId: string, sessionId: string): string {
  return JSON.stringify([userId, sessionId]);
}
