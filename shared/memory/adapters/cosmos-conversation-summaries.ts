// The Cosmos DB adapter of ConversationSummaries (container `conversation-summaries`, partition userId, id =
// sessionId): writes conditioned on the version read, a list behind an opaque token bound to the user, and search
// by vector (in Cosmos DB, or in process) fused in process with full-text ranks.
import type { Container, SqlQuerySpec } from '@azure/cosmos';
import { z } from 'zod';
import { inScopes, memoryScopeSchema } from '../../conversation/memory-scope.js';
import { mapBounded } from '../../bounded-parallel.js';
import { scopeCondition } from './scope-condition.js';
import { nearestQuery } from '../../cosmos/adapters/hybrid-search-query.js';
import {
  deleteItem,
  deletePartitionItems,
  parseStored,
  queryItems,
  queryPages,
  readThroughCache,
  StoredItemCache,
} from '../../cosmos/adapters/cosmos-items.js';
import { writeOnVersion } from '../../cosmos/adapters/cosmos-patch.js';
import { listKey, readListPage } from '../../cosmos/adapters/list-pages.js';
import type { FullTextMode } from '../../search/full-text.js';
import {
  conversationSummaryDocumentSchema,
  summaryContentSchema,
  type ConversationSummaryDocument,
  type ConversationSummaryView,
} from '../contracts.js';
import {
  summarySearchText,
  type ConversationSummaries,
  type SummaryMatch,
  type SummaryQuery,
} from '../conversation-summaries.js';
import { candidatePool } from '../../search/relevance.js';
import {
  nearest,
  rankCandidates,
  termCounts,
  vectorNorm,
  type RankCandidate,
  type TermCounts,
} from '../../search/hybrid-ranking.js';

const KIND = 'conversation-summary';
/** Summaries whose latest version this process keeps (a few hundred conversations in consolidation at once). */
const LATEST_SUMMARIES = 500;
const what = 'the conversation summary';

/** The fields a summary is shown with: every field but the vector and the bookkeeping (never sent back). */
const VIEW_FIELDS = [
  'sessionId',
  'scope',
  'summary',
  'themes',
  'persons',
  'places',
  'user_sentiment',
  'timestamp',
  'createdAt',
] as const;
const VIEW_PROJECTION = VIEW_FIELDS.map((field) => `c.${field}`).join(', ');

const summaryViewSchema = summaryContentSchema.extend({
  sessionId: z.string(),
  scope: memoryScopeSchema.optional(),
  timestamp: z.iso.datetime(),
  createdAt: z.iso.datetime(),
}) satisfies z.ZodType<ConversationSummaryView>;

export interface SummaryStoreOptions {
  /** Where search is ranked: Cosmos DB's own functions (Azure), or in process (the local server). */
  ranking: FullTextMode;
  /** Summaries whose vector and terms this process keeps for in-process ranking (default 20,000). */
  cachedSummaries?: number;
}

export function createCosmosConversationSummaries(
  container: Container,
  options: SummaryStoreOptions,
): ConversationSummaries {
  const candidates = new CandidateCache(options.cachedSummaries ?? DEFAULT_CACHED_SUMMARIES);
  // The summaries this process last read or wrote, with their versions: the memory worker reads a conversation's
  // summary each turn, and after its own write that read is a 304 without a body rather than the whole document.
  const latest = new StoredItemCache<ConversationSummaryDocument>(LATEST_SUMMARIES);

  async function searchInProcess(userId: string, query: SummaryQuery): Promise<SummaryMatch[]> {
    // The ids and versions of the user's summaries, read every time: a deleted or rewritten summary leaves or
    // changes the results at once. Only the summaries this process has not seen at that version are read whole.
    const stored: z.infer<typeof versionRowSchema>[] = [];
    for await (const page of queryPages(
      container,
      {
        query: 'SELECT c.id, c._etag FROM c WHERE c.kind = @kind',
        parameters: [{ name: '@kind', value: KIND }],
      },
      { partitionKey: userId, pageSize: VERSION_PAGE },
      'the conversation summaries',
      versionRowSchema,
    ))
      stored.push(...page);
    const known = new Map<string, Candidate>();
    const missing: string[] = [];
    for (const row of stored) {
      const cached = candidates.get(userId, row.id, row._etag);
      if (cached === undefined) missing.push(row.id);
      else known.set(row.id, cached);
    }
    for (const candidate of await readCandidates(container, userId, missing)) {
      candidates.set(userId, candidate);
      known.set(candidate.id, candidate);
    }
    const inQuery = [...known.values()].filter(
      (candidate) => query.scopes === undefined || inScopes(candidate.view, query.scopes),
    );
    return rankCandidates(nearest(inQuery, query.vector, candidatePool(query.limit)), query).map(
      ({ candidate, score, similarity }) => ({ summary: structuredClone(candidate.view), score, similarity }),
    );
  }

  async function searchInCosmos(userId: string, query: SummaryQuery): Promise<SummaryMatch[]> {
    const rows = await queryItems(
      container,
      summarySearchQuery(query),
      userId,
      'the conversation summaries',
      searchRowSchema,
    );
    const candidates = rows.map(({ similarity, ...view }) => ({
      id: view.sessionId,
      similarity,
      text: termCounts(summarySearchText(view)),
      view,
    }));
    return rankCandidates(candidates, query).map(({ candidate, score, similarity }) => ({
      summary: candidate.view,
      score,
      similarity,
    }));
  }

  return {
    async get(userId, sessionId) {
      const read = await readThroughCache(
        latest,
        candidateKey(userId, sessionId),
        container,
        sessionId,
        userId,
        what,
        conversationSummaryDocumentSchema,
      );
      return read?.resource.userId === userId
        ? { summary: structuredClone(read.resource), version: read.etag }
        : undefined;
    },

    async put(summary, version) {
      const document: ConversationSummaryDocument = { ...summary, id: summary.sessionId, kind: KIND };
      const key = candidateKey(summary.userId, summary.sessionId);
      const written = await writeOnVersion(container, document, summary.userId, version, what);
      if (written === 'conflict') return 'conflict';
      if (written.etag) latest.set(key, { resource: structuredClone(document), etag: written.etag });
      else latest.delete(key);
      return 'written';
    },

    search(userId, query) {
      if (query.limit < 1) return Promise.resolve([]);
      return options.ranking === 'cosmos' ? searchInCosmos(userId, query) : searchInProcess(userId, query);
    },

    async list(userId, listOptions) {
      const scope = listOptions.scope === undefined ? undefined : scopeCondition([listOptions.scope]);
      const page = await readListPage(container, {
        query: {
          query: `SELECT ${VIEW_PROJECTION} FROM c WHERE c.kind = @kind${scope ? ` AND ${scope.sql}` : ''} ORDER BY c.timestamp DESC`,
          parameters: [{ name: '@kind', value: KIND }, ...(scope?.parameters ?? [])],
        },
        partitionKey: userId,
        limit: listOptions.limit,
        ...(listOptions.continuationToken === undefined
          ? {}
          : { continuationToken: listOptions.continuationToken }),
        list: listKey(['conversation-summaries', userId, ...(listOptions.scope ? [listOptions.scope] : [])]),
        parse: (resources) => parseStored(z.array(summaryViewSchema), resources, 'conversation summaries'),
        what: 'listing conversation summaries',
      });
      return page.continuationToken === undefined
        ? { summaries: page.items }
        : { summaries: page.items, continuationToken: page.continuationToken };
    },

    async delete(userId, sessionId) {
      candidates.delete(userId, sessionId);
      return deleteItem(container, sessionId, userId, what);
    },

    async deleteAll(userId) {
      candidates.deleteUser(userId);
      return deletePartitionItems(container, userId, "the user's conversation summaries");
    },
  };
}

// --- Search in Cosmos DB -------------------------------------------------------------------------------------

const searchRowSchema = summaryViewSchema.extend({ similarity: z.number() });

/**
 * The user's candidatePool(limit) summaries nearest to the query's vector, in their partition (the request's partition
 * key): a plain vector search, answered from the vector index. Their full-text ranks are fused in process
 * (rankCandidates), over the summary and its themes, persons and places. Not Cosmos DB's hybrid query: RRF with
 * FullTextScore scoped to one partition key is the case other SDKs report broken (the ranking has no effect in .NET,
 * parameterised FullTextScore refused in Java), and @azure/cosmos 4.9 sends it to the gateway and then fans the
 * full-text statistics query out to every partition of the container. A summary that holds a word of the query but
 * is not among the nearest candidates is not found: with SEARCH_CANDIDATES at 50, a user's first 50 conversations
 * are all candidates.
 */
function summarySearchQuery(query: SummaryQuery): SqlQuerySpec {
  const scope = query.scopes === undefined ? undefined : scopeCondition(query.scopes);
  return nearestQuery({
    projection: VIEW_PROJECTION,
    vectorPath: 'c.vector_embedding',
    where: scope === undefined ? 'c.kind = @kind' : `c.kind = @kind AND ${scope.sql}`,
    parameters: [{ name: '@kind', value: KIND }, ...(scope?.parameters ?? [])],
    vector: query.vector,
    limit: candidatePool(query.limit),
  });
}

// --- Search in process ----------------------------------------------------------------------------------------

const versionRowSchema = z.object({ id: z.string(), _etag: z.string() });
const storedWithVersionSchema = conversationSummaryDocumentSchema.extend({ _etag: z.string() });

/** What in-process ranking needs of a summary at one stored version. */
interface Candidate extends RankCandidate {
  etag: string;
  view: ConversationSummaryView;
  vector: Float32Array;
  norm: number;
  text: TermCounts;
}

/**
 * Page size of the candidate query: -1 lets Cosmos DB fill each page up to its 4 MB cap (ids and versions are ~70
 * bytes each, so 10,000 summaries come in one page) instead of the SDK's default pages of 100.
 */
const VERSION_PAGE = -1;
/** Whole summaries per query when their vectors are read, and such queries in flight at once. */
const IDS_PER_READ = 100;
const PARALLEL_READS = 4;
const DEFAULT_CACHED_SUMMARIES = 20_000;

/**
 * The summaries of `ids` read whole (those deleted meanwhile are absent), as candidates: by id, a few queries in
 * flight at once, each for a bounded number of ids (about 3 MB of JSON at 1,536 dimensions, under Cosmos DB's 4 MB
 * per response), never the whole partition in one scan.
 */
async function readCandidates(
  container: Container,
  userId: string,
  ids: readonly string[],
): Promise<Candidate[]> {
  const chunks: string[][] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_READ) chunks.push(ids.slice(i, i + IDS_PER_READ));
  const read = await mapBounded(chunks, PARALLEL_READS, (chunk) =>
    queryItems(
      container,
      {
        query: 'SELECT * FROM c WHERE c.kind = @kind AND ARRAY_CONTAINS(@ids, c.id)',
        parameters: [
          { name: '@kind', value: KIND },
          { name: '@ids', value: chunk },
        ],
      },
      userId,
      'the conversation summaries',
      storedWithVersionSchema,
    ),
  );
  return read.flat().map(toCandidate);
}

function toCandidate(document: ConversationSummaryDocument & { _etag: string }): Candidate {
  // float32, as stored in the vector index: half the memory of numbers, the same values an embedding model sends.
  const vector = Float32Array.from(document.vector_embedding);
  return {
    id: document.id,
    etag: document._etag,
    view: toView(document),
    vector,
    norm: vectorNorm(vector),
    text: termCounts(summarySearchText(document)),
  };
}

function toView(document: ConversationSummaryDocument): ConversationSummaryView {
  const { sessionId, summary, themes, persons, places, user_sentiment, timestamp, createdAt } = document;
  return {
    sessionId,
    ...(document.scope === undefined ? {} : { scope: document.scope }),
    summary,
    themes,
    persons,
    places,
    user_sentiment,
    timestamp,
    createdAt,
  };
}

/**
 * Candidates by user and id at the version they were read at; bounded, least recently used first out. A search
 * uses an entry only when the stored version (from the candidate query) is still the one cached.
 */
class CandidateCache {
  readonly #entries = new Map<string, Candidate>();
  constructor(private readonly capacity: number) {}

  get(userId: string, id: string, etag: string): Candidate | undefined {
    const key = candidateKey(userId, id);
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.etag !== etag) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry;
  }

  set(userId: string, candidate: Candidate): void {
    const key = candidateKey(userId, candidate.id);
    this.#entries.delete(key);
    this.#entries.set(key, candidate);
    while (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  delete(userId: string, id: string): void {
    this.#entries.delete(candidateKey(userId, id));
  }

  deleteUser(userId: string): void {
    const prefix = candidateKey(userId, '');
    for (const key of this.#entries.keys()) if (key.startsWith(prefix)) this.#entries.delete(key);
  }
}

const candidateKey = (userId: string, id: string) => `${userId}\u0000${id}`;
