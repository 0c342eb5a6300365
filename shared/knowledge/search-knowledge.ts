// Knowledge search (POST /api/knowledge/search and the chat's search_knowledge_base tool): the query's embedding,
// then one hybrid search (RRF of the vector rank and the BM25 rank) over the chunks of the ready documents of the
// libraries the caller may read (their own and the shared one), each result with the citation it is quoted by.
import type { LlmGateway } from '../llm/llm-gateway.js';
import { searchableLibraries, type KnowledgeSearchHit } from './contracts.js';
import { citationOf } from './citation.js';
import type { KnowledgeChunks } from './knowledge-chunks.js';
import { libraryName } from './libraries.js';

export interface KnowledgeSearchServices {
  chunks: KnowledgeChunks;
  llm: Pick<LlmGateway, 'embed'>;
}

export async function searchKnowledge(
  services: KnowledgeSearchServices,
  userId: string,
  query: string,
  limit: number,
): Promise<KnowledgeSearchHit[]> {
  const [vector] = await services.llm.embed([query]);
  if (vector === undefined) throw new Error('The embeddings endpoint answered no vector for the query.');
  const matches = await services.chunks.search({
    libraries: searchableLibraries(userId),
    text: query,
    vector,
    limit,
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
