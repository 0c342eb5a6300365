// A text or PDF attachment longer than the prompt's budget: cut into passages as the knowledge base cuts documents,
// ranked by BM25 against the conversation's latest question, and the best that fit the budget go to the prompt in the
// file's own order, so an answer in the middle of a long file still reaches the model.
import { bm25Scores, queryTerms, termCounts } from '../search/hybrid-ranking.js';

/** Cuts a file's text into passages (the knowledge base's chunker, given by the composition). */
export type Chunker = (text: string) => string[];

/** Paragraphs: the cut when no chunker is given. */
export const paragraphChunker: Chunker = (text) =>
  text
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '');

const GAP = '\n[…]\n';

/** The passages that best match `question` within `budgetChars`, in the file's order; how many of how many. */
export function matchingPassages(
  text: string,
  question: string,
  budgetChars: number,
  chunk: Chunker,
): { text: string; kept: number; of: number } {
  const passages = chunk(text);
  const scores = bm25Scores(queryTerms(question), passages.map(termCounts));
  // Best first; among equals (no word of the question at all, say) the file's order, as a cut would keep.
  const order = [...passages.keys()].sort((a, b) => (scores[b] ?? 0) - (scores[a] ?? 0) || a - b);
  const chosen: number[] = [];
  let used = 0;
  for (const index of order) {
    const length = (passages[index] ?? '').length + GAP.length;
    if (used + length > budgetChars) continue;
    chosen.push(index);
    used += length;
  }
  chosen.sort((a, b) => a - b);
  return { text: chosen.map((index) => passages[index]).join(GAP), kept: chosen.length, of: passages.length };
}
