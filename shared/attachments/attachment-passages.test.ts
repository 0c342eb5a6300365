import { describe, expect, it } from 'vitest';
import { matchingPassages, paragraphChunker, passageOrder } from './attachment-passages.js';

const filler = (i: number) =>
  `Paragraph ${i}: the river ran past mill number ${i} on a mild and quiet morning.`;

describe('passages of a file too long for the prompt', () => {
  const paragraphs = Array.from({ length: 200 }, (_, i) => filler(i));
  paragraphs[101] = 'The vault code is 7319, kept by the night porter.';
  const text = paragraphs.join('\n\n');

  it('keeps the passage that answers the question, wherever it is, within the budget', () => {
    const found = matchingPassages(paragraphChunker(text), 'What is the vault code?', 400);
    expect(found.text).toContain('The vault code is 7319');
    expect(found.text.length).toBeLessThanOrEqual(400);
    expect(found.of).toBe(200);
    expect(found.kept).toBeGreaterThan(1);
  });

  it("keeps the file's order, and its start when no word of the question occurs", () => {
    const found = matchingPassages(paragraphChunker(text), 'Who won the cup?', 250);
    expect(found.text.startsWith(filler(0))).toBe(true);
    const kept = found.text.split('\n[…]\n');
    expect(kept).toEqual(paragraphs.slice(0, kept.length));
  });
});

describe('passages ranked by words and embeddings together', () => {
  // Passage 2 holds the question's words; passage 4 answers in other words, and only its embedding is near.
  const passages = [
    'Opening hours of the shop on weekdays.',
    'Delivery vans leave the yard at six.',
    'The vault has a code; ask at the desk.',
    'Staff parking is behind the bakery.',
    'Seven three one nine opens our strongbox behind reception.',
  ];
  const question = 'What is the vault code?';
  const unit = (axis: number) => Array.from({ length: 5 }, (_, i) => (i === axis ? 1 : 0));
  const embeddings = {
    question: unit(0),
    passages: [unit(1), unit(2), [0.6, 0.8, 0, 0, 0], unit(3), [0.9, 0, 0, 0.4359, 0]],
  };

  it('fuses the BM25 rank with the cosine rank: the answer in other words comes first, the words close behind', () => {
    // BM25 alone: passage 2, then the others in the file's order, the answer last of all.
    expect(passageOrder(passages, question)).toEqual([2, 0, 1, 3, 4]);
    // Fused (reciprocal rank fusion, k = 60): passage 4 is first by cosine and shares the words' last rank, 1/61 + 1/62;
    // passage 2 is first by words and second by cosine, 1/61 + 1/62 too, and the higher similarity breaks the tie.
    expect(passageOrder(passages, question, embeddings)).toEqual([4, 2, 0, 1, 3]);
  });

  it('fills the budget in that order and gives the kept passages back in the file order', () => {
    const budget = passages[2]!.length + passages[4]!.length + 2 * '\n[…]\n'.length;
    expect(matchingPassages(passages, question, budget).text).not.toContain('strongbox');
    const found = matchingPassages(passages, question, budget, embeddings);
    expect(found).toEqual({ text: `${passages[2]}\n[…]\n${passages[4]}`, kept: 2, of: 5 });
  });

  it('ranks by words alone when the embeddings do not match the passages', () => {
    const short = { question: embeddings.question, passages: embeddings.passages.slice(0, 3) };
    expect(passageOrder(passages, question, short)).toEqual(passageOrder(passages, question));
  });
});
