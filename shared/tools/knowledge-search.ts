// The tool search_knowledge_base: hybrid search over the documents the user may read (their own and the
// shared library's). The model reads each hit's text with the citation it cites it by; the turn keeps the
// hits as its sources (a `cited` result), which it streams before the answer and stores with it.
import { z } from 'zod';

import { MAX_CITATION_CHARS, shortened } from '../knowledge/citation.js';
import {
  DEFAULT_KNOWLEDGE_SEARCH_LIMIT,
  knowledgeQuerySchema,
  MAX_HEADING_CHARS,
  SEARCH_KNOWLEDGE_BASE_TOOL,
  type KnowledgeSearchHit,
} from '../knowledge/contracts.js';
import { SOURCE_EXCERPT_CHARS, type KnowledgeSource } from '../conversation/sources.js';
import { cited, defineTool, type ToolDefinition } from './tool-registry.js';

/** Chunks one call returns at most: each is a few hundred tokens of the model's prompt. */
export const MAX_KNOWLEDGE_TOOL_LIMIT = 10;

export interface KnowledgeSearchDeps {
  /** The knowledge area's search use-case (shared/knowledge/search-knowledge.ts), bound to its services. */
  searchKnowledge: (
    userId: string,
    query: string,
    limit: number,
    documentIds?: readonly string[],
  ) => Promise<KnowledgeSearchHit[]>;
}

/** A hit as the model reads it: what to cite it by, where it is, its text, and how well it matched. */
interface FoundChunk {
  citation: string;
  title: string;
  heading?: string;
  pages?: number[];
  text: string;
  /** Higher is better; comparable within one result only. */
  score: number;
}

export function knowledgeSearchTool(deps: KnowledgeSearchDeps): ToolDefinition {
  return defineTool({
    name: SEARCH_KNOWLEDGE_BASE_TOOL,
    description:
      "Searches the user's knowledge base (the documents they uploaded and the shared library; in a conversation " +
      'whose assistant or project names documents, only those) by meaning and ' +
      'words, and returns the best passages, each with its citation (the document title and its page or ' +
      'section), its text and a relevance score. Use it when the user asks about their documents, a handbook, ' +
      'a policy or anything such documents may answer. Answer from the passages only, and cite each passage ' +
      'you use right after what it supports, with its citation in square brackets, e.g. [Employee Handbook, ' +
      'p. 4]. When nothing relevant is found, say so instead of guessing.',
    arguments: z.object({
      query: knowledgeQuerySchema.describe(
        'What to look for, in a few words or a sentence (for example "parental leave policy").',
      ),
      limit: z
        .number()
        .int()
        .min(1)
        .max(MAX_KNOWLEDGE_TOOL_LIMIT)
        .optional()
        .describe(
          `How many passages to return (1-${MAX_KNOWLEDGE_TOOL_LIMIT}; ${DEFAULT_KNOWLEDGE_SEARCH_LIMIT} when not given).`,
        ),
    }),
    async run({ query, limit }, { userId, documentIds: named, currentDocumentIds }) {
      const documentIds = currentDocumentIds === undefined ? named : await currentDocumentIds();
      const hits = await deps.searchKnowledge(
        userId,
        query,
        limit ?? DEFAULT_KNOWLEDGE_SEARCH_LIMIT,
        documentIds,
      );
      if (hits.length === 0) {
        const where =
          documentIds === undefined ? "the user's knowledge base" : "this conversation's documents";
        return cited({ query, results: [], note: `Nothing in ${where} matches the search.` }, []);
      }
      const result = resultWithin(query, hits);
      // The turn keeps as sources only the passages the model read.
      return cited(result, hits.slice(0, result.results.length).map(sourceOf));
    },
  });
}

/**
 * Characters of JSON a result takes at most: below the registry's 16,000, which would cut it mid-JSON, so the model
 * always reads whole passages.
 */
export const KNOWLEDGE_RESULT_MAX_CHARS = 12_000;

interface KnowledgeResult {
  query: string;
  results: FoundChunk[];
  note?: string;
}

/**
 * The result with the best passages that fit KNOWLEDGE_RESULT_MAX_CHARS, in rank order, and a note saying how many
 * more were left out. The best passage is always given: when it alone does not fit, its text is cut to fit.
 */
function resultWithin(query: string, hits: readonly KnowledgeSearchHit[]): KnowledgeResult {
  const resultOf = (results: FoundChunk[]): KnowledgeResult => {
    const left = hits.length - results.length;
    if (left === 0) return { query, results };
    const passages = left === 1 ? '1 more passage' : `${left} more passages`;
    const note = `${passages} matched but did not fit in this result; search again with a narrower query to read them.`;
    return { query, results, note };
  };
  const size = (result: KnowledgeResult) => JSON.stringify(result).length;
  const results: FoundChunk[] = [];
  for (const hit of hits) {
    const next = resultOf([...results, foundChunk(hit)]);
    if (size(next) > KNOWLEDGE_RESULT_MAX_CHARS) break;
    results.push(foundChunk(hit));
  }
  if (results.length > 0) return resultOf(results);
  // The best passage alone is too long: its text is cut by what the result is over (each character it loses is at
  // least one of the JSON), an ellipsis included.
  let best = foundChunk(hits[0]!);
  for (let over = size(resultOf([best])) - KNOWLEDGE_RESULT_MAX_CHARS; over > 0 && best.text !== '';) {
    const keep = [...best.text].length - over - 1;
    best = { ...best, text: keep > 0 ? shortened(best.text, keep) : '' };
    over = size(resultOf([best])) - KNOWLEDGE_RESULT_MAX_CHARS;
  }
  return resultOf([best]);
}

function foundChunk(hit: KnowledgeSearchHit): FoundChunk {
  return {
    ...citedBy(hit),
    text: hit.text,
    // RRF scores are small fractions: four significant digits say the order without noise.
    score: Number(hit.score.toPrecision(4)),
  };
}

/** A hit as the turn keeps it: what cites it, and the start of its text for a client to show. */
export function sourceOf(hit: KnowledgeSearchHit): KnowledgeSource {
  return {
    chunkId: hit.chunkId,
    documentId: hit.documentId,
    ...citedBy(hit),
    excerpt: excerptOf(hit.text),
    score: hit.score,
  };
}

/**
 * What a hit is cited by, as both the model and the turn's sources have it: its citation, title, heading and
 * pages. The heading and the citation are held to their caps also for a chunk stored before there were any.
 */
function citedBy(hit: KnowledgeSearchHit): Pick<FoundChunk, 'citation' | 'title' | 'heading' | 'pages'> {
  return {
    citation: shortened(hit.citation, MAX_CITATION_CHARS),
    title: hit.title,
    ...(hit.heading === undefined ? {} : { heading: shortened(hit.heading, MAX_HEADING_CHARS) }),
    ...(hit.pages === undefined ? {} : { pages: hit.pages }),
  };
}

/**
 * The text on one line, cut to SOURCE_EXCERPT_CHARS characters (an ellipsis included) at a word when one ends in
 * its last fifth; counted in code points, so no character is split.
 */
export function excerptOf(text: string): string {
  return shortened(text.replace(/\s+/g, ' ').trim(), SOURCE_EXCERPT_CHARS);
}
