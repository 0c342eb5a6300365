// Hand-written in-memory implementations of the memory area's ports (conversation summaries, profile facts), with
// the semantics their Cosmos DB adapters have, for tests of use-cases in process. Search ranks by the product's
// own in-process hybrid ranking, as the adapter does where Cosmos DB lacks VectorDistance and FullTextScore.
import { inGaps } from '../../shared/conversation/branch-path.js';
import { scopeOf, type MemoryScope } from '../../shared/conversation/memory-scope.js';
import type {
  ConsolidationRecord,
  ConversationSummaryDocument,
  ConversationSummaryView,
  FactStatus,
  ProfileChange,
  ProfileFact,
  SummarySnapshot,
} from '../../shared/memory/contracts.js';
import { consolidationId } from '../../shared/memory/contracts.js';
import {
  summarySearchText,
  type ConversationSummaries,
  type StoredSummary,
  type SummaryMatch,
  type SummaryPage,
  type SummaryQuery,
} from '../../shared/memory/conversation-summaries.js';
import type { ConsolidationQuery, ProfileFacts, StoredFact } from '../../shared/memory/profile-facts.js';
import { ValidationError } from '../../shared/errors.js';
import { nearest, rankCandidates, termCounts } from '../../shared/search/hybrid-ranking.js';
import { candidatePool } from '../../shared/search/relevance.js';

const key = (userId: string, id: string) => `${userId}\u0000${id}`;

export function summaryView(document: ConversationSummaryDocument): ConversationSummaryView {
  return {
    sessionId: document.sessionId,
    ...(document.scope === undefined ? {} : { scope: document.scope }),
    summary: document.summary,
    themes: document.themes,
    persons: document.persons,
    places: document.places,
    user_sentiment: document.user_sentiment,
    timestamp: document.timestamp,
    createdAt: document.createdAt,
  };
}

export class MemoryConversationSummaries implements ConversationSummaries {
  readonly documents = new Map<string, { document: ConversationSummaryDocument; version: number }>();
  private nextVersion = 1;

  get(userId: string, sessionId: string): Promise<StoredSummary | undefined> {
    const stored = this.documents.get(key(userId, sessionId));
    return Promise.resolve(
      stored ? { summary: structuredClone(stored.document), version: String(stored.version) } : undefined,
    );
  }

  put(summary: ConversationSummaryDocument, version: string | undefined): Promise<'written' | 'conflict'> {
    const k = key(summary.userId, summary.sessionId);
    const stored = this.documents.get(k);
    if (
      version === undefined
        ? stored !== undefined
        : stored === undefined || String(stored.version) !== version
    )
      return Promise.resolve('conflict');
    this.documents.set(k, { document: structuredClone(summary), version: this.nextVersion++ });
    return Promise.resolve('written');
  }

  search(userId: string, query: SummaryQuery): Promise<SummaryMatch[]> {
    const mine = [...this.documents.values()]
      .map((stored) => stored.document)
      .filter((document) => document.userId === userId)
      .filter((document) => query.scopes === undefined || query.scopes.includes(scopeOf(document)));
    // As the adapter: the nearest by vector, fused with their full-text ranks, those that earn their place.
    const candidates = mine.map((document) => ({
      id: document.sessionId,
      vector: document.vector_embedding,
      text: termCounts(summarySearchText(document)),
      document,
    }));
    const ranked = rankCandidates(nearest(candidates, query.vector, candidatePool(query.limit)), query);
    return Promise.resolve(
      ranked.map(({ candidate, score, similarity }) => ({
        summary: summaryView(candidate.document),
        score,
        similarity,
      })),
    );
  }

  list(
    userId: string,
    options: { limit: number; continuationToken?: string; scope?: MemoryScope },
  ): Promise<SummaryPage> {
    const mine = [...this.documents.values()]
      .map((s) => s.document)
      .filter((document) => document.userId === userId)
      .filter((document) => options.scope === undefined || scopeOf(document) === options.scope)
      .sort((a, b) => b.timestamp.localeCompare(a.timestamp) || a.sessionId.localeCompare(b.sessionId));
    let offset = 0;
    if (options.continuationToken !== undefined) {
      const match = /^mem:(.+):(\d+)$/.exec(options.continuationToken);
      if (match?.[1] !== userId) throw new ValidationError('continuationToken is not valid for this list');
      offset = Number(match[2]);
    }
    const page = mine.slice(offset, offset + options.limit);
    const next = offset + page.length;
    return Promise.resolve({
      summaries: page.map(summaryView),
      ...(next < mine.length ? { continuationToken: `mem:${userId}:${next}` } : {}),
    });
  }

  delete(userId: string, sessionId: string): Promise<boolean> {
    return Promise.resolve(this.documents.delete(key(userId, sessionId)));
  }

  deleteAll(userId: string): Promise<number> {
    let removed = 0;
    for (const [k, stored] of this.documents)
      if (stored.document.userId === userId) {
        this.documents.delete(k);
        removed++;
      }
    return Promise.resolve(removed);
  }
}

export class MemoryProfileFacts implements ProfileFacts {
  readonly facts = new Map<string, ProfileFact>();
  readonly records = new Map<string, ConsolidationRecord>();
  /** Order of creation, so list() answers oldest first as the adapter does (by createdAt, then id). */
  private order = 0;
  private readonly created = new Map<string, number>();
  /** Each fact's version, changed by every write, as Cosmos DB's etag is. */
  private readonly versions = new Map<string, number>();
  private nextVersion = 1;

  list(
    userId: string,
    options: { statuses?: readonly FactStatus[]; scopes?: readonly MemoryScope[] } = {},
  ): Promise<ProfileFact[]> {
    const facts = [...this.facts.entries()]
      .filter(([, fact]) => fact.userId === userId)
      .filter(([, fact]) => options.scopes === undefined || options.scopes.includes(scopeOf(fact)))
      .filter(([, fact]) => options.statuses === undefined || options.statuses.includes(fact.status))
      .sort(
        ([ka, a], [kb, b]) =>
          a.createdAt.localeCompare(b.createdAt) || (this.created.get(ka) ?? 0) - (this.created.get(kb) ?? 0),
      )
      .map(([, fact]) => structuredClone(fact));
    return Promise.resolve(facts);
  }

  get(userId: string, factId: string): Promise<StoredFact | undefined> {
    const k = key(userId, factId);
    const fact = this.facts.get(k);
    return Promise.resolve(
      fact ? { fact: structuredClone(fact), version: String(this.versions.get(k)) } : undefined,
    );
  }

  put(fact: ProfileFact, version: string | undefined): Promise<'written' | 'conflict'> {
    const k = key(fact.userId, fact.id);
    if (!this.isAt(k, version)) return Promise.resolve('conflict');
    if (!this.created.has(k)) this.created.set(k, this.order++);
    this.facts.set(k, structuredClone(fact));
    this.versions.set(k, this.nextVersion++);
    return Promise.resolve('written');
  }

  delete(userId: string, factId: string, version?: string): Promise<boolean> {
    const k = key(userId, factId);
    if (!this.facts.has(k) || (version !== undefined && !this.isAt(k, version)))
      return Promise.resolve(false);
    this.facts.delete(k);
    this.versions.delete(k);
    return Promise.resolve(true);
  }

  /** Whether the fact is at `version` (undefined: absent), as the adapter's If-Match and create check it. */
  private isAt(k: string, version: string | undefined): boolean {
    const stored = this.facts.has(k) ? this.versions.get(k) : undefined;
    return version === undefined ? stored === undefined : String(stored) === version;
  }

  fromSession(userId: string, sessionId: string): Promise<ProfileFact[]> {
    return this.list(userId).then((facts) =>
      facts.filter((fact) => fact.provenance.some((source) => source.sessionId === sessionId)),
    );
  }

  getConsolidation(userId: string, sessionId: string, chatMessageId: string) {
    const record = this.records.get(key(userId, consolidationId(sessionId, chatMessageId)));
    return Promise.resolve(record ? structuredClone(record) : undefined);
  }

  async consolidationStart(userId: string, sessionId: string, chatMessageId: string) {
    const [record, active] = await Promise.all([
      this.getConsolidation(userId, sessionId, chatMessageId),
      this.list(userId, { statuses: ['active'] }),
    ]);
    return { record, active };
  }

  createConsolidation(record: ConsolidationRecord): Promise<ConsolidationRecord> {
    const k = key(record.userId, record.id);
    const existing = this.records.get(k);
    if (existing) return Promise.resolve(structuredClone(existing));
    this.records.set(k, structuredClone(record));
    return Promise.resolve(structuredClone(record));
  }

  markApplied(
    userId: string,
    recordId: string,
    appliedAt: string,
    summaryAfter?: SummarySnapshot,
  ): Promise<void> {
    const record = this.records.get(key(userId, recordId));
    if (record) {
      record.appliedAt = appliedAt;
      if (summaryAfter !== undefined) record.summaryAfter = structuredClone(summaryAfter);
    }
    return Promise.resolve();
  }

  markWithdrawn(userId: string, recordId: string, withdrawnAt: string | undefined): Promise<void> {
    const record = this.records.get(key(userId, recordId));
    if (record && withdrawnAt !== undefined) record.withdrawnAt = withdrawnAt;
    else if (record) delete record.withdrawnAt;
    return Promise.resolve();
  }

  findConsolidations(
    userId: string,
    sessionId: string,
    query: ConsolidationQuery,
  ): Promise<ConsolidationRecord[]> {
    const found = [...this.records.values()]
      .filter((record) => record.userId === userId && record.sessionId === sessionId)
      .filter((record): record is ConsolidationRecord & { source: { ordinal: number } } => {
        const ordinal = record.source.ordinal;
        return (
          ordinal !== undefined &&
          ordinal < query.before &&
          (query.within === undefined || inGaps(ordinal, query.within)) &&
          !inGaps(ordinal, query.outside ?? []) &&
          (query.withdrawn === undefined || (record.withdrawnAt !== undefined) === query.withdrawn) &&
          (!query.changed || record.changes.length > 0) &&
          (!query.summarised || record.summaryAfter !== undefined)
        );
      })
      .sort((a, b) => (query.order === 'asc' ? 1 : -1) * (a.source.ordinal - b.source.ordinal))
      .slice(0, query.limit ?? Number.MAX_SAFE_INTEGER);
    return Promise.resolve(found.map((record) => structuredClone(record)));
  }

  consolidationsChanging(userId: string, factId: string): Promise<ConsolidationRecord[]> {
    const found = [...this.records.values()].filter(
      (record) =>
        record.userId === userId &&
        record.changes.some(
          (change) => change.factId === factId || (change.op === 'replace' && change.newFactId === factId),
        ),
    );
    return Promise.resolve(found.map((record) => structuredClone(record)));
  }

  setChanges(userId: string, recordId: string, changes: readonly ProfileChange[]): Promise<void> {
    const record = this.records.get(key(userId, recordId));
    if (record) record.changes = structuredClone([...changes]);
    return Promise.resolve();
  }

  deleteConsolidations(userId: string, sessionId: string): Promise<number> {
    let removed = 0;
    for (const [k, record] of this.records)
      if (record.userId === userId && record.sessionId === sessionId) {
        this.records.delete(k);
        removed++;
      }
    return Promise.resolve(removed);
  }

  deleteAll(userId: string): Promise<number> {
    let removed = 0;
    for (const map of [this.facts, this.records] as Map<string, { userId: string }>[])
      for (const [k, item] of map)
        if (item.userId === userId) {
          map.delete(k);
          removed++;
        }
    return Promise.resolve(removed);
  }
}
