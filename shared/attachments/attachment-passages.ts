// A text or PDF attachment longer than the prompt's budget: cut into passages as the knowledge base cuts documents,
// ranked against the conversation's latest question (BM25, fused with the embeddings' cosine ranking when they can
// be had, as the knowledge base fuses them), and the best that fit the budget go to the prompt in the file's order.
import { bm25Scores, cosineSimilarity, fuseRanks, queryTerms, termCounts } from '../search/hybrid-ranking.js';

/** Cuts a file's text into passages (the knowledge base's chunker, given by the composition). */
export type Chunker = (text: string) => string[];

/** Paragraphs: the cut when no chunker is given. */
export const paragraphChunker: Chunker = (text) =>
  text
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '');

/** The question's embedding and each passage's, in the file's order. */
export interface PassageEmbeddings {
  question: readonly number[];
  passages: readonly ArrayLike<number>[];
}

const GAP = '\n[…]\n';

/** The passages that best match `question` within `budgetChars`, in the file's order; how many of how many. */
export function matchingPassages(
  passages: readonly string[],
  question: string,
  budgetChars: number,
  embeddings?: PassageEmbeddings,
): { text: string; kept: number; of: number } {
  const chosen: number[] = [];
  let used = 0;
  for (const index of passageOrder(passages, question, embeddings)) {
    const length = (passages[index] ?? '').length + GAP.length;
    if (used + length > budgetChars) continue;
    chosen.push(index);
    used += length;
  }
  chosen.sort((a, b) => a - b);
  return { text: chosen.map((index) => passages[index]).join(GAP), kept: chosen.length, of: passages.length };
}

/**
 * The passages' indexes, best first. By BM25 alone without embeddings; with them, reciprocal rank fusion of the
 * BM25 rank and the cosine rank (the knowledge base's fuseRanks), so a passage that answers in other words still
 * ranks high. Among equals, the file's order, as a cut would keep.
 */
export function passageOrder(
  passages: readonly string[],
  question: string,
  embeddings?: PassageEmbeddings,
): number[] {
  const terms = queryTerms(question);
  const counts = passages.map(termCounts);
  if (embeddings === undefined || embeddings.passages.length !== passages.length) {
    const scores = bm25Scores(terms, counts);
    return [...passages.keys()].sort((a, b) => (scores[b] ?? 0) - (scores[a] ?? 0) || a - b);
  }
  const candidates = passages.map((_, index) => ({
    id: passageId(index),
    similarity: cosineSimilarity(embeddings.question, embeddings.passages[index] ?? []),
    text: counts[index] ?? { counts: new Map<string, number>(), length: 0 },
  }));
  return fuseRanks(candidates, terms, passages.length).map(({ id }) => Number(id));
}

/** Ids that sort as the file's order does: fuseRanks breaks the last ties by id. */
const passageId = (index: number) => String(index).padStart(12, '0');
