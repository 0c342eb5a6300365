// A long file's passages ranked by their embeddings too: made once in batches and kept, the question embedded once
// per round, and words alone (with a warning) when the embeddings endpoint fails.
import { describe, expect, it } from 'vitest';
import { MemoryAttachments } from '../../test/support/in-memory-attachments.js';
import type { ChatMessage } from '../llm/llm-gateway.js';
import type { MessageAttachment } from '../message-attachments.js';
import { withAttachments } from './model-attachments.js';
import { vectorsKey, type PassageEmbedding, type PassageVectorStore } from './passage-vectors.js';

const ANSWER = 'Seven three one nine opens our strongbox behind reception.';
const QUESTION = 'What is the vault code?';
const filler = (i: number) =>
  `Paragraph ${i}: the river ran past mill number ${i} on a mild and quiet morning.`;

/** The answer and the question point one way; every other text another (by its length), so only they are near. */
function vectorOf(text: string): number[] {
  if (text.includes('strongbox') || text === QUESTION) return [1, 0, 0];
  return [0, 1, (text.length % 7) / 7];
}

class FakeEmbeddings {
  readonly calls: string[][] = [];
  failing = false;
  embed(texts: string[]): Promise<number[][]> {
    this.calls.push(texts);
    if (this.failing) return Promise.reject(new Error('connect ECONNREFUSED'));
    return Promise.resolve(texts.map(vectorOf));
  }
}

class MemoryVectors implements PassageVectorStore {
  readonly kept = new Map<string, Float32Array[]>();
  read(userId: string, attachmentId: string, key: string) {
    return Promise.resolve(this.kept.get(`${userId}/${attachmentId}/${key}`));
  }
  write(userId: string, attachment: { id: string }, key: string, vectors: readonly ArrayLike<number>[]) {
    const at = `${userId}/${attachment.id}/${key}`;
    if (!this.kept.has(at))
      this.kept.set(
        at,
        vectors.map((vector) => Float32Array.from(vector)),
      );
    return Promise.resolve();
  }
}

const file: MessageAttachment = {
  id: `att-${'b'.repeat(32)}`,
  name: 'ledger.txt',
  mediaType: 'text/plain',
  size: 0,
};
const paragraphs = Array.from({ length: 40 }, (_, i) => filler(i));
paragraphs[23] = ANSWER;

async function setUp() {
  const store = new MemoryAttachments();
  await store.put('u', { ...file, sha256: '', sessionId: 's' }, Buffer.from(paragraphs.join('\n\n')));
  const llm = new FakeEmbeddings();
  const vectors = new MemoryVectors();
  const warnings: unknown[][] = [];
  const embedding: PassageEmbedding = {
    llm,
    vectors,
    model: 'm1',
    batch: 16,
    maxPassages: 100,
    log: { warn: (...args: unknown[]) => warnings.push(args) },
  };
  // About four paragraphs fit: a cut would keep the start, words alone the start too (no word is shared).
  const reading = { store, config: { imageTurns: 4, textTokens: 80 }, embedding };
  const ask = async (text = QUESTION) => {
    const messages: ChatMessage[] = [{ role: 'user', content: text, attachments: [file] }];
    const [sent] = await withAttachments(reading, 'u', messages);
    return sent?.content ?? '';
  };
  return { llm, vectors, warnings, embedding, ask };
}

describe('a long file searched by its embeddings too', () => {
  it('finds the passage that shares no word with the question, and embeds the passages once', async () => {
    const { llm, vectors, ask } = await setUp();
    expect(await ask()).toContain(ANSWER);
    // Three batches of at most 16 passages, and the question once.
    const passageCalls = llm.calls.filter((texts) => texts[0] !== QUESTION);
    expect(passageCalls.map((texts) => texts.length)).toEqual([16, 16, 8]);
    expect(passageCalls[0]?.[0]).toBe(`ledger.txt\n\n${filler(0)}`);
    expect(llm.calls.filter((texts) => texts[0] === QUESTION)).toHaveLength(1);
    expect(vectors.kept.size).toBe(1);

    // The next turn reads them back: only its question is embedded.
    llm.calls.length = 0;
    expect(await ask()).toContain(ANSWER);
    expect(llm.calls).toEqual([[QUESTION]]);
  });

  it('makes them anew for another embedding model', async () => {
    const { llm, vectors, embedding, ask } = await setUp();
    await ask();
    embedding.model = 'm2';
    llm.calls.length = 0;
    await ask();
    expect(llm.calls).toHaveLength(4);
    expect(vectors.kept.size).toBe(2);
    expect(vectorsKey('m1', ['a'])).not.toBe(vectorsKey('m2', ['a']));
    expect(vectorsKey('m1', ['ab', 'c'])).not.toBe(vectorsKey('m1', ['a', 'bc']));
  });

  it('ranks by words alone, with a warning, when the embeddings endpoint fails; the turn goes on', async () => {
    const { llm, vectors, warnings, ask } = await setUp();
    llm.failing = true;
    const content = await ask();
    expect(content).not.toContain(ANSWER);
    expect(content).toContain(filler(0));
    expect(content).toContain('passages that best match the question');
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]?.[0])).toContain('ranked by words alone');
    expect(vectors.kept.size).toBe(0);
  });

  it('ranks a file of more passages than the most embedded by words alone, asking nothing', async () => {
    const { llm, embedding, ask } = await setUp();
    embedding.maxPassages = 39;
    expect(await ask()).not.toContain(ANSWER);
    expect(llm.calls).toEqual([]);
  });
});
