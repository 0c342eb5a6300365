// The tool search_knowledge_base over a recording search: what it asks for, what the model reads back, the
// sources the turn keeps, and the arguments it refuses.
import { beforeEach, describe, expect, it } from 'vitest';
import { MAX_CITATION_CHARS } from '../knowledge/citation.js';
import { MAX_HEADING_CHARS, type KnowledgeSearchHit } from '../knowledge/contracts.js';
import { SOURCE_EXCERPT_CHARS } from '../conversation/sources.js';
import { MemoryWorkingMemory } from '../../test/support/in-memory-ports.js';
import { MemoryConversationMessages, MemorySessionMemory } from '../../test/support/in-memory-history.js';
import { createChatTools } from './index.js';
import { excerptOf, KNOWLEDGE_RESULT_MAX_CHARS, knowledgeSearchTool } from './knowledge-search.js';
import { ToolRegistry, type ToolContext } from './tool-registry.js';

const context: ToolContext = { userId: 'user_001', sessionId: 'session-1', chatMessageId: 'chat-1' };

const leave: KnowledgeSearchHit = {
  chunkId: 'doc1:3',
  documentId: 'a'.repeat(32),
  title: 'Employee Handbook',
  headings: ['Time off', 'Parental leave'],
  heading: 'Parental leave',
  pages: [4],
  text: 'Parents get twenty weeks of paid leave.\n\nIt can be split.',
  library: 'shared',
  score: 0.0327868852459,
  similarity: 0.81,
  citation: 'Employee Handbook, p. 4',
};
const notes: KnowledgeSearchHit = {
  chunkId: 'doc2:0',
  documentId: 'b'.repeat(32),
  title: 'Notes',
  headings: [],
  text: 'word '.repeat(100),
  library: 'private',
  score: 0.016,
  similarity: 0.5,
  citation: 'Notes',
};

let asked: { userId: string; query: string; limit: number; documentIds?: readonly string[] }[];
let answer: KnowledgeSearchHit[];
let registry: ToolRegistry;

beforeEach(() => {
  asked = [];
  answer = [leave, notes];
  registry = new ToolRegistry([
    knowledgeSearchTool({
      searchKnowledge: (userId, query, limit, documentIds) => {
        asked.push({ userId, query, limit, ...(documentIds === undefined ? {} : { documentIds }) });
        return Promise.resolve(answer);
      },
    }),
  ]);
});

async function search(args: unknown, at: ToolContext = context) {
  const outcome = await registry.execute(
    { id: 'call-1', name: 'search_knowledge_base', arguments: JSON.stringify(args) },
    at,
  );
  return { ...outcome, value: JSON.parse(outcome.result) as Record<string, unknown> };
}

describe('search_knowledge_base', () => {
  it("searches only the conversation's documents when its assistant or project names them", async () => {
    const named = ['a'.repeat(32)];
    answer = [];
    const { value } = await search({ query: 'parental leave' }, { ...context, documentIds: named });
    expect(asked).toEqual([{ userId: 'user_001', query: 'parental leave', limit: 5, documentIds: named }]);
    expect(value).toEqual({
      query: 'parental leave',
      results: [],
      note: "Nothing in this conversation's documents matches the search.",
    });
  });

  it('searches the documents the conversation names as they are now, not those its prompt recorded', async () => {
    const recorded = ['a'.repeat(32)];
    const now = ['b'.repeat(32), 'c'.repeat(32)];
    await search(
      { query: 'parental leave' },
      { ...context, documentIds: recorded, currentDocumentIds: () => Promise.resolve(now) },
    );
    // A project that names no document any more: the whole knowledge base, as in a conversation outside one.
    await search(
      { query: 'parental leave' },
      { ...context, documentIds: recorded, currentDocumentIds: () => Promise.resolve(undefined) },
    );
    expect(asked).toEqual([
      { userId: 'user_001', query: 'parental leave', limit: 5, documentIds: now },
      { userId: 'user_001', query: 'parental leave', limit: 5 },
    ]);
  });

  it("searches the caller's libraries with the default limit, and gives each passage with its citation", async () => {
    const { isError, value } = await search({ query: 'parental leave' });
    expect(isError).toBe(false);
    expect(asked).toEqual([{ userId: 'user_001', query: 'parental leave', limit: 5 }]);
    expect(value).toEqual({
      query: 'parental leave',
      results: [
        {
          citation: 'Employee Handbook, p. 4',
          title: 'Employee Handbook',
          heading: 'Parental leave',
          pages: [4],
          text: leave.text,
          score: 0.03279,
        },
        { citation: 'Notes', title: 'Notes', text: notes.text, score: 0.016 },
      ],
    });
  });

  it('keeps the passages as the turn’s sources, in rank order, with an excerpt of each', async () => {
    const { sources } = await search({ query: 'parental leave', limit: 2 });
    expect(asked[0]?.limit).toBe(2);
    expect(sources).toEqual([
      {
        chunkId: 'doc1:3',
        documentId: leave.documentId,
        title: 'Employee Handbook',
        heading: 'Parental leave',
        pages: [4],
        citation: 'Employee Handbook, p. 4',
        excerpt: 'Parents get twenty weeks of paid leave. It can be split.',
        score: leave.score,
      },
      {
        chunkId: 'doc2:0',
        documentId: notes.documentId,
        title: 'Notes',
        citation: 'Notes',
        excerpt: expect.stringMatching(/^(word ){59}word…$/) as string,
        score: notes.score,
      },
    ]);
  });

  it('holds a heading and a citation that run on (a chunk stored before their caps) to the caps', async () => {
    const heading = 'Parental leave and what else the handbook says '.repeat(30);
    answer = [{ ...leave, pages: undefined, heading, citation: `Employee Handbook › ${heading}` }];
    const { value, sources } = await search({ query: 'parental leave' });
    const [found] = value['results'] as { heading: string; citation: string }[];
    for (const cited of [found, sources?.[0]]) {
      expect([...(cited?.heading ?? '')].length).toBeLessThanOrEqual(MAX_HEADING_CHARS);
      expect([...(cited?.citation ?? '')].length).toBeLessThanOrEqual(MAX_CITATION_CHARS);
      expect(cited?.heading).toMatch(/^Parental leave and .*…$/);
      expect(cited?.citation).toMatch(/^Employee Handbook › Parental leave .*…$/);
    }
    expect(sources?.[0]).not.toHaveProperty('pages');
  });

  it(`fits whole passages into ${KNOWLEDGE_RESULT_MAX_CHARS} characters, says how many more matched, and keeps only those it gives as sources`, async () => {
    const long = (n: number): KnowledgeSearchHit => ({
      ...leave,
      chunkId: `doc1:${n}`,
      text: `Passage ${n}. ${'Parents get twenty weeks of paid leave. '.repeat(75)}`,
    });
    answer = [1, 2, 3, 4, 5].map(long);
    const outcome = await search({ query: 'parental leave' });
    expect(outcome.result.length).toBeLessThanOrEqual(KNOWLEDGE_RESULT_MAX_CHARS);
    const results = outcome.value['results'] as { text: string }[];
    expect(results.map((found) => found.text)).toEqual(answer.slice(0, 3).map((hit) => hit.text));
    expect(outcome.value['note']).toBe(
      '2 more passages matched but did not fit in this result; search again with a narrower query to read them.',
    );
    expect(outcome.sources?.map((source) => source.chunkId)).toEqual(['doc1:1', 'doc1:2', 'doc1:3']);

    answer = [long(1), long(2), long(3), long(4)];
    expect((await search({ query: 'parental leave' })).value['note']).toMatch(/^1 more passage matched/);
  });

  it('gives the best passage cut to fit when it alone is longer than the result may be', async () => {
    answer = [{ ...leave, text: '"Quoted" words and more. '.repeat(1_000) }, notes];
    const outcome = await search({ query: 'parental leave' });
    expect(outcome.result.length).toBeLessThanOrEqual(KNOWLEDGE_RESULT_MAX_CHARS);
    expect(outcome.result.length).toBeGreaterThan(KNOWLEDGE_RESULT_MAX_CHARS * 0.8);
    const [best] = outcome.value['results'] as { text: string }[];
    expect(best?.text).toMatch(/^"Quoted" words .*…$/);
    expect(outcome.value['note']).toMatch(/^1 more passage matched/);
    expect(outcome.sources?.map((source) => source.chunkId)).toEqual([leave.chunkId]);
  });

  it('says when nothing matches, with no sources', async () => {
    answer = [];
    const outcome = await search({ query: 'boats' });
    expect(outcome.value).toEqual({
      query: 'boats',
      results: [],
      note: "Nothing in the user's knowledge base matches the search.",
    });
    expect(outcome.sources).toBeUndefined();
  });

  it.each([
    [{}, /query: /],
    [{ query: '   ' }, /query: is empty/],
    [{ query: 'x', limit: 0 }, /limit: /],
    [{ query: 'x', limit: 11 }, /limit: /],
    [{ query: 'x'.repeat(1_001) }, /query: /],
  ])('refuses the arguments %j', async (args, problem) => {
    const outcome = await search(args);
    expect(outcome.isError).toBe(true);
    expect(outcome.value['error']).toMatch(problem);
    expect(asked).toEqual([]);
  });

  it('is offered in a use_memory false turn', () => {
    const deps = {
      messages: new MemoryConversationMessages(),
      sessionMemory: new MemorySessionMemory(new MemoryConversationMessages()),
      workingMemory: new MemoryWorkingMemory(),
      searchConversations: () => Promise.resolve([]),
    };
    const withSearch = createChatTools({ ...deps, searchKnowledge: () => Promise.resolve([]) });
    expect(withSearch.specs({ useMemory: false }).map((spec) => spec.name)).toContain(
      'search_knowledge_base',
    );
    const [spec] = withSearch.specs().filter((one) => one.name === 'search_knowledge_base');
    expect(spec?.description).toMatch(/square brackets/);
    expect(spec?.parameters).toMatchObject({ required: ['query'] });
  });
});

describe('excerptOf', () => {
  it('keeps a short text whole, on one line', () => {
    expect(excerptOf('  A\n\nB \t C  ')).toBe('A B C');
  });

  it(`cuts a long text to ${SOURCE_EXCERPT_CHARS} characters at a word, never inside a character`, () => {
    const cut = excerptOf('lorem '.repeat(80));
    expect([...cut].length).toBeLessThanOrEqual(SOURCE_EXCERPT_CHARS);
    expect(cut).toMatch(/^(lorem )+lorem…$/);
    const emoji = excerptOf('😀'.repeat(400));
    expect([...emoji]).toHaveLength(SOURCE_EXCERPT_CHARS);
    expect(emoji.endsWith('😀…')).toBe(true);
  });
});
