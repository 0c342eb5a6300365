// Chunking: sections kept apart, the token target and the overlap honoured, long paragraphs cut at sentences (then
// words, then characters), page ranges, the caller's chunk limit, and the same chunks every time; the invariants are
// also checked on seeded random documents.
import { describe, expect, it } from 'vitest';

import { SeededRandom } from '../../test/support/seeded-random.js';
import { estimateTokens } from '../conversation/tokens.js';

import { chunkDocument, embeddingInput } from './chunking.js';
import { MAX_HEADING_CHARS, type ChunkDraft } from './contracts.js';
import type { ExtractedDocument, TextBlock } from './document-text.js';

const h = (level: 1 | 2 | 3 | 4 | 5 | 6, text: string): TextBlock => ({ kind: 'heading', level, text });
const p = (text: string, page?: number): TextBlock =>
  page === undefined ? { kind: 'text', text } : { kind: 'text', text, page };
const doc = (...blocks: TextBlock[]): ExtractedDocument => ({ pageCount: 1, blocks });

/** A sentence of exactly `bytes` ASCII bytes (at least 12), ending with a full stop, numbered to be told apart. */
function sentence(number: number, bytes = 60): string {
  const head = `S${number} `;
  return `${head}${'w'.repeat(Math.max(1, bytes - head.length - 1))}.`;
}
const sentences = (from: number, count: number, bytes = 60): string =>
  Array.from({ length: count }, (_, offset) => sentence(from + offset, bytes)).join(' ');

describe('chunkDocument', () => {
  it('gathers the paragraphs of a section up to the target, joined by a blank line', () => {
    const chunks = chunkDocument(doc(h(1, 'Leave'), p('One.'), p('Two.'), p('Three.')), {
      targetTokens: 100,
      overlapTokens: 0,
    });

    expect(chunks).toEqual([{ index: 0, text: 'One.\n\nTwo.\n\nThree.', headings: ['Leave'], tokens: 6 }]);
  });

  it('never mixes sections, keeps the heading path outermost first, and leaves headings out of the text', () => {
    const chunks = chunkDocument(
      doc(
        p('Before any heading.'),
        h(1, 'Handbook'),
        p('Intro.'),
        h(2, 'Leave'),
        h(3, 'Annual'),
        p('25 days.'),
        h(3, 'Sick'),
        p('Tell your manager.'),
        h(2, 'Pay'),
        p('Monthly.'),
        h(1, 'Appendix'),
        h(4, 'Deep'),
        p('Deep text.'),
      ),
      { targetTokens: 400, overlapTokens: 60 },
    );

    expect(chunks.map(({ headings, text }) => ({ headings, text }))).toEqual([
      { headings: [], text: 'Before any heading.' },
      { headings: ['Handbook'], text: 'Intro.' },
      { headings: ['Handbook', 'Leave', 'Annual'], text: '25 days.' },
      { headings: ['Handbook', 'Leave', 'Sick'], text: 'Tell your manager.' },
      { headings: ['Handbook', 'Pay'], text: 'Monthly.' },
      { headings: ['Appendix', 'Deep'], text: 'Deep text.' },
    ]);
    expect(chunks.map((chunk) => chunk.index)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('starts a new chunk with a paragraph that does not fit, rather than cutting it', () => {
    // 40-token paragraphs (120 bytes) under a 100-token target: two fit, the third opens the next chunk.
    const chunks = chunkDocument(doc(p(sentences(1, 2)), p(sentences(3, 2)), p(sentences(5, 2))), {
      targetTokens: 100,
      overlapTokens: 0,
    });

    expect(chunks.map((chunk) => chunk.text)).toEqual([
      `${sentences(1, 2)}\n\n${sentences(3, 2)}`,
      sentences(5, 2),
    ]);
  });

  it('cuts a paragraph longer than the target at sentence ends, filling each chunk', () => {
    const chunks = chunkDocument(doc(p(sentences(1, 12))), { targetTokens: 100, overlapTokens: 0 });

    // 60-byte sentences joined by a space: five take 304 bytes (102 tokens), so four fit in 300 bytes.
    expect(chunks.map((chunk) => chunk.text)).toEqual([sentences(1, 4), sentences(5, 4), sentences(9, 4)]);
    for (const chunk of chunks) expect(chunk.tokens).toBeLessThanOrEqual(100);
  });

  it('repeats the last whole sentences of the previous chunk, within the overlap', () => {
    const chunks = chunkDocument(doc(h(1, 'Policy'), p(sentences(1, 12))), {
      targetTokens: 100,
      overlapTokens: 45, // 135 bytes: two 60-byte sentences and their space (121 bytes), not three
    });

    expect(chunks.map((chunk) => chunk.text)).toEqual([
      sentences(1, 4),
      sentences(3, 4),
      sentences(5, 4),
      sentences(7, 4),
      sentences(9, 4),
    ]);
  });

  it('repeats sentences of the previous paragraph before a paragraph that opens a chunk', () => {
    // 3 sentences: 182 bytes; one repeated sentence, the break and the paragraph: 244 bytes (82 tokens).
    const chunks = chunkDocument(doc(p(sentences(1, 3)), p(sentences(4, 3))), {
      targetTokens: 82,
      overlapTokens: 25,
    });

    expect(chunks.map((chunk) => chunk.text)).toEqual([
      sentences(1, 3),
      `${sentence(3)}\n\n${sentences(4, 3)}`,
    ]);
  });

  it('repeats less (or nothing) when the overlap would not leave room for what follows', () => {
    // The second paragraph takes the whole target: no sentence of the first can come along.
    const chunks = chunkDocument(doc(p(sentences(1, 3)), p(sentences(4, 5, 59))), {
      targetTokens: 100,
      overlapTokens: 50,
    });

    expect(chunks.map((chunk) => chunk.text)).toEqual([sentences(1, 3), sentences(4, 5, 59)]);
  });

  it(`cuts a heading that runs on to ${MAX_HEADING_CHARS} characters at a word, and the chunk's text not at all`, () => {
    const long = 'Parental leave and everything else the handbook says '.repeat(20).trim();
    const [chunk] = chunkDocument(doc(h(1, 'Handbook'), h(2, long), p(long)), {
      targetTokens: 1_000,
      overlapTokens: 0,
    });
    const heading = chunk?.headings[1] ?? '';
    expect([...heading].length).toBeLessThanOrEqual(MAX_HEADING_CHARS);
    expect(heading).toMatch(/^Parental leave and .* \w+…$/);
    expect(long.startsWith(heading.slice(0, -1))).toBe(true);
    expect(chunk?.headings[0]).toBe('Handbook');
    expect(chunk?.text).toBe(long);
  });

  it('does not carry an overlap across a heading, and none at all when the overlap is 0', () => {
    const across = chunkDocument(doc(h(2, 'A'), p(sentences(1, 4)), h(2, 'B'), p(sentences(5, 4))), {
      targetTokens: 100,
      overlapTokens: 50,
    });
    expect(across.map((chunk) => chunk.text)).toEqual([sentences(1, 4), sentences(5, 4)]);

    const none = chunkDocument(doc(p(sentences(1, 12))), { targetTokens: 100, overlapTokens: 0 });
    expect(none.map((chunk) => chunk.text).join(' ')).toBe(sentences(1, 12));
  });

  it('does not split after an abbreviation followed by a lowercase word', () => {
    const text = `${'Use the form, e.g. the blue one, and send it. '.repeat(12)}Done.`;

    const chunks = chunkDocument(doc(p(text)), { targetTokens: 60, overlapTokens: 0 });

    for (const chunk of chunks) expect(chunk.text).toMatch(/^(Use the form, e\.g\. the blue one|Done\.)/);
    expect(chunks.map((chunk) => chunk.text).join(' ')).toBe(text);
  });

  it('cuts a sentence longer than the target between words, and a longer word between characters', () => {
    const words = Array.from({ length: 300 }, (_, index) => `word${index}`).join(' ');
    const chunks = chunkDocument(doc(p(`${words}.`)), { targetTokens: 50, overlapTokens: 20 });

    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((chunk) => chunk.text).join(' ')).toBe(`${words}.`);
    for (const chunk of chunks) expect(chunk.tokens).toBeLessThanOrEqual(50);

    const word = 'é'.repeat(200) + '😀'.repeat(50); // 400 + 200 bytes, no space anywhere
    const pieces = chunkDocument(doc(p(word)), { targetTokens: 50, overlapTokens: 20 });
    expect(pieces.map((chunk) => chunk.text).join('')).toBe(word);
    for (const chunk of pieces) {
      expect(chunk.tokens).toBeLessThanOrEqual(50);
      expect(chunk.text).not.toMatch(/[\uD800-\uDBFF]$/); // no emoji cut in half
    }
  });

  it('cuts code at line ends and keeps its lines', () => {
    const code = Array.from({ length: 40 }, (_, index) => `  step_${index}(value) # keep indentation`).join(
      '\n',
    );

    const chunks = chunkDocument(doc(p(code)), { targetTokens: 100, overlapTokens: 0 });

    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((chunk) => chunk.text).join('\n')).toBe(code);
    for (const chunk of chunks) expect(chunk.text.startsWith('  step_')).toBe(true);
  });

  it('cuts CJK text at its full stops, which have no space after them', () => {
    const text = '年次休暇は二十五日です。'.repeat(30); // 36 bytes a sentence

    const chunks = chunkDocument(doc(p(text)), { targetTokens: 50, overlapTokens: 0 });

    expect(chunks.map((chunk) => chunk.text).join('')).toBe(text);
    for (const chunk of chunks) {
      expect(chunk.text).toMatch(/。$/);
      expect(chunk.tokens).toBeLessThanOrEqual(50);
    }
  });

  it('gives the pages a chunk’s text comes from as a contiguous range, and none for formats without pages', () => {
    const chunks = chunkDocument(
      { pageCount: 6, blocks: [p('On four.', 4), p('On six.', 6), h(1, 'Next'), p('Also six.', 6)] },
      { targetTokens: 100, overlapTokens: 0 },
    );
    expect(chunks.map((chunk) => chunk.pages)).toEqual([[4, 5, 6], [6]]);

    const overlapping = chunkDocument(
      { pageCount: 2, blocks: [p(sentences(1, 4), 1), p(sentences(5, 3), 2)] },
      { targetTokens: 100, overlapTokens: 25 },
    );
    expect(overlapping.map((chunk) => chunk.pages)).toEqual([[1], [1, 2]]);

    const plain = chunkDocument(doc(p('No pages.')), { targetTokens: 100, overlapTokens: 0 });
    expect(plain[0]).not.toHaveProperty('pages');
  });

  it('stops at one chunk more than maxChunks, so the caller can tell a document is over its limit', () => {
    const blocks = Array.from({ length: 10 }, (_, index) => [
      h(2, `Section ${index}`),
      p(`Text ${index}.`),
    ]).flat();

    expect(chunkDocument(doc(...blocks), { targetTokens: 100, overlapTokens: 0, maxChunks: 3 })).toHaveLength(
      4,
    );
    expect(
      chunkDocument(doc(...blocks), { targetTokens: 100, overlapTokens: 0, maxChunks: 10 }),
    ).toHaveLength(10);
    expect(chunkDocument(doc(...blocks), { targetTokens: 100, overlapTokens: 0 })).toHaveLength(10);

    const long = chunkDocument(doc(p(sentences(1, 100))), {
      targetTokens: 50,
      overlapTokens: 0,
      maxChunks: 2,
    });
    expect(long.map((chunk) => chunk.index)).toEqual([0, 1, 2]);
  });

  it('makes no chunk of a document without text', () => {
    expect(chunkDocument(doc(), { targetTokens: 100, overlapTokens: 10 })).toEqual([]);
    expect(chunkDocument(doc(h(1, 'Title'), p('  \n ')), { targetTokens: 100, overlapTokens: 10 })).toEqual(
      [],
    );
  });

  it('cuts long runs of punctuation and spaces in linear time', () => {
    const started = performance.now();
    const chunks = chunkDocument(doc(p('.'.repeat(300_000)), p(`a${' '.repeat(300_000)}b\nc`)), {
      targetTokens: 400,
      overlapTokens: 60,
    });

    expect(chunks.length).toBeGreaterThan(0);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('chunkDocument on random documents', () => {
  const words = ['leave', 'policy', 'é', 'data', '日本語', '😀', 'approval', 'x', 'manager', 'the', 'of'];

  function randomDocument(random: SeededRandom, id: { next: number }): ExtractedDocument {
    const blocks: TextBlock[] = [];
    let page = 1;
    const count = random.int(1, 60);
    for (let block = 0; block < count; block += 1) {
      if (random.chance(0.2)) {
        blocks.push(h(random.int(1, 4) as 1 | 2 | 3 | 4, `Heading ${block}`));
        continue;
      }
      if (random.chance(0.3)) page += random.int(1, 2);
      const sentenceCount = random.int(1, random.chance(0.1) ? 80 : 6);
      const parts: string[] = [];
      for (let index = 0; index < sentenceCount; index += 1) {
        const length = random.int(1, random.chance(0.05) ? 400 : 25);
        const body = Array.from({ length }, () => words[random.int(0, words.length - 1)]).join(' ');
        parts.push(`Q${id.next++} ${body}${['.', '!', '?'][random.int(0, 2)]}`);
      }
      blocks.push(p(parts.join(' '), page));
    }
    return { pageCount: page, blocks };
  }

  it('keeps every invariant: target, overlap, sections, order, pages, coverage, determinism', () => {
    const random = new SeededRandom(12);
    for (let round = 0; round < 60; round += 1) {
      const document = randomDocument(random, { next: 0 });
      const targetTokens = random.int(20, 200);
      const overlapTokens = random.int(0, Math.floor(targetTokens / 2));
      const options = { targetTokens, overlapTokens };
      const chunks = chunkDocument(document, options);

      expect(chunkDocument(document, options)).toEqual(chunks);
      checkInvariants(document, chunks, options);
    }
  });
});

function checkInvariants(
  document: ExtractedDocument,
  chunks: readonly ChunkDraft[],
  options: { targetTokens: number; overlapTokens: number },
): void {
  const sectionPaths = new Set<string>();
  const path: { level: number; text: string }[] = [];
  for (const block of document.blocks) {
    if (block.kind === 'heading') {
      while (path.length > 0 && path.at(-1)!.level >= block.level) path.pop();
      path.push({ level: block.level, text: block.text });
    } else sectionPaths.add(JSON.stringify(path.map((heading) => heading.text)));
  }

  chunks.forEach((chunk, index) => {
    expect(chunk.index).toBe(index);
    expect(chunk.text.trimEnd()).toBe(chunk.text);
    expect(chunk.text).not.toBe('');
    expect(chunk.tokens).toBe(estimateTokens(chunk.text));
    expect(chunk.tokens).toBeLessThanOrEqual(options.targetTokens);
    expect(sectionPaths.has(JSON.stringify(chunk.headings))).toBe(true);
    if (chunk.pages) {
      chunk.pages.forEach((page, position) => expect(page).toBe(chunk.pages![0]! + position));
    }
    const previous = chunks[index - 1];
    if (previous && JSON.stringify(previous.headings) === JSON.stringify(chunk.headings)) {
      // The overlap: whole sentences (each numbered Qn) of the previous chunk's end, within the budget.
      const repeated = repeatedPrefix(previous.text, chunk.text);
      expect(estimateTokens(repeated)).toBeLessThanOrEqual(options.overlapTokens);
      if (repeated !== '') expect(repeated).toMatch(/^Q\d+ [\s\S]*[.!?]$/);
    }
  });

  // Every sentence's number appears, in reading order (the first time each is seen).
  const expected = document.blocks.flatMap((block) =>
    block.kind === 'text' ? [...block.text.matchAll(/Q(\d+)\b/g)].map((match) => Number(match[1])) : [],
  );
  const seen: number[] = [];
  for (const chunk of chunks) {
    for (const match of chunk.text.matchAll(/Q(\d+)\b/g)) {
      const number = Number(match[1]);
      if (!seen.includes(number)) seen.push(number);
    }
  }
  expect(seen).toEqual(expected);
}

/** The longest start of `next` that ends a sentence and is also the end of `previous` (the repeated sentences). */
function repeatedPrefix(previous: string, next: string): string {
  let longest = '';
  for (const match of next.matchAll(/[.!?](?=\s|$)/g)) {
    const candidate = next.slice(0, match.index + 1);
    if (candidate.length > previous.length) break;
    if (previous.endsWith(candidate) && candidate.startsWith('Q')) longest = candidate;
  }
  return longest;
}

describe('embeddingInput', () => {
  it('puts the title and the heading path before the text', () => {
    expect(embeddingInput('Handbook', { headings: ['Leave', 'Annual'], text: '25 days.' })).toBe(
      'Handbook\nLeave > Annual\n\n25 days.',
    );
    expect(embeddingInput('Handbook', { headings: [], text: '25 days.' })).toBe('Handbook\n\n25 days.');
    expect(embeddingInput(' ', { headings: [], text: '25 days.' })).toBe('25 days.');
  });
});
