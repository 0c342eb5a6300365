// Knowledge search (POST /api/knowledge/search and the tool search_knowledge_base): one hybrid search over
// the ready documents the caller may read, keeping the chunks that earn their place, each with its citation.
import type { LlmGateway } from '../llm/llm-gateway.js';
import type { Relevance } from '../search/relevance.js';
import { searchableLibraries, type KnowledgeSearchHit } from './contracts.js';
import { citationOf } from './citation.js';
import type { KnowledgeChunks } from './knowledge-chunks.js';
import { libraryName } from './libraries.js';
import { genAiSpanName, retrievalAttributes } from '../telemetry/gen-ai.js';
import { SpanKind, withSpan } from '../telemetry/spans.js';

export interface KnowledgeSearchServices {
  chunks: KnowledgeChunks;
  llm: Pick<LlmGateway, 'embed'>;
  /** What earns a chunk its place in the results (SEARCH_* settings, the embedding model's threshold). */
  relevance: Relevance;
}

export function searchKnowledge(
  services: KnowledgeSearchServices,
  userId: string,
  query: string,
  limit: number,
  /** Only these documents (a conversation's assistant's and project's knowledge); absent: every one readable. */
  documentIds?: readonly string[],
): Promise<KnowledgeSearchHit[]> {
  return withSpan(
    genAiSpanName('retrieval', KNOWLEDGE_CHUNKS),
    { kind: SpanKind.CLIENT, attributes: retrievalAttributes({ dataSource: KNOWLEDGE_CHUNKS, topK: limit }) },
    async (span) => {
      const hits = await rankChunks(services, userId, query, limit, documentIds);
      span.setAttribute('chat.retrieval.results', hits.length);
      return hits;
    },
  );
}

/** The data source knowledge search reads, as its retrieval spans name it. */
const KNOWLEDGE_CHUNKS = 'knowledge-chunks';

async function rankChunks(
  services: KnowledgeSearchServices,
  userId: string,
  query: string,
  limit: number,
  documentIds: readonly string[] | undefined,
): Promise<KnowledgeSearchHit[]> {
  const [vector] = await services.llm.embed([query]);
  if (vector === undefined) throw new Error('The embeddings endpoint answered no vector for the query.');
  const matches = await services.chunks.search({
    libraries: searchableLibraries(userId),
    ...(documentIds === undefined ? {} : { documentIds }),
    text: query,
    vector,
    limit,
    relevance: services.relevance,
  });
  return matches.map(({ chunk, score, similarity }) => {
    const heading = chunk.headings.at(-1);
    return {
      chunkId: chunk.id,
      documentId: chunk.documentId,
      title: chunk.title,
      headings: chunk.headings,
      ...(heading !== undefined ? { heading } : {}),
      ...(chunk.pages !== undefined ? { pages: chunk.pages } : {}),
      text: chunk.text,
      library: libraryName(chunk.library),
      score,
      similarity,
      citation: citationOf(chunk.title, chunk.pages, heading),
    };
  });
}
